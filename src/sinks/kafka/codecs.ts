// Compression codecs for kafkajs beyond its built-in gzip, registered on first use so that a sink
// without compression loads none of them. Each was chosen because it installs from npm on these
// machines with no native build and no download (docs/kafka.md has the survey):
//   snappy  kafkajs-snappy (the kafkajs author's codec, pure JS snappyjs; reads xerial framing)
//   lz4     lz4-napi (napi-rs, prebuilt binaries as npm packages) — the LZ4 *frame* format
//           with independent blocks, which is what Kafka's KafkaLZ4BlockInputStream reads
//   zstd    @bokuweb/zstd-wasm (libzstd compiled to WebAssembly) — standard zstd frames
// Each round-trips through a real broker in test/sinks/kafka.int.test.ts, in both directions
// (weir → Java broker validation, and Java broker recompression → weir).
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { loadZstd } from '../zstd.js';
import type { Compression } from './spec.js';

const { CompressionCodecs, CompressionTypes } = kafkajs;

/** What kafkajs expects of a codec. */
interface Codec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

/**
 * Upper bound of a zstd frame's decompressed size when the frame does not say (Java's
 * ZstdOutputStream writes streaming frames without a content size). Record batches are bounded
 * by the broker's message.max.bytes (1 MiB by default) before compression; 64 MiB leaves room.
 */
const ZSTD_MAX_UNKNOWN_SIZE = 64 * 1024 * 1024;

async function lz4Codec(): Promise<Codec> {
  const lz4 = await import('lz4-napi');
  return {
    compress: async (encoder) => lz4.compressFrame(encoder.buffer),
    decompress: async (buffer) => lz4.decompressFrame(buffer),
  };
}

async function zstdCodec(): Promise<Codec> {
  const zstd = await loadZstd();
  return {
    compress: async (encoder) => Buffer.from(zstd.compress(encoder.buffer, 3)),
    decompress: async (buffer) => Buffer.from(zstd.decompress(buffer, { defaultHeapSize: ZSTD_MAX_UNKNOWN_SIZE })),
  };
}

function snappyCodec(): Codec {
  // A CommonJS module without type declarations: a factory returning the codec.
  const require = createRequire(import.meta.url);
  const factory = require('kafkajs-snappy') as () => Codec;
  return factory();
}

const registered = new Map<Compression, Promise<void>>();

/**
 * Makes kafkajs able to write (and read) `compression`; idempotent. kafkajs keeps codecs in one
 * process-wide table, so this also serves every consumer in the process (tests, reconcile).
 */
export function registerCodec(compression: Compression): Promise<void> {
  let done = registered.get(compression);
  if (done) return done;
  done = (async () => {
    switch (compression) {
      case 'none':
      case 'gzip':
        return;
      case 'snappy': {
        const codec = snappyCodec();
        CompressionCodecs[CompressionTypes.Snappy] = () => codec;
        return;
      }
      case 'lz4': {
        const codec = await lz4Codec();
        CompressionCodecs[CompressionTypes.LZ4] = () => codec;
        return;
      }
      case 'zstd': {
        const codec = await zstdCodec();
        CompressionCodecs[CompressionTypes.ZSTD] = () => codec;
        return;
      }
    }
  })();
  registered.set(compression, done);
  done.catch(() => registered.delete(compression));
  return done;
}

/** kafkajs' number for a compression name. */
export function compressionType(compression: Compression): kafkajs.CompressionTypes {
  switch (compression) {
    case 'none':
      return CompressionTypes.None;
    case 'gzip':
      return CompressionTypes.GZIP;
    case 'snappy':
      return CompressionTypes.Snappy;
    case 'lz4':
      return CompressionTypes.LZ4;
    case 'zstd':
      return CompressionTypes.ZSTD;
  }
}
