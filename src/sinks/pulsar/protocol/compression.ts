// Batch compression for the protocol transport: Pulsar's five CompressionType codecs, each from a
// library weir already depends on (the Kafka sink uses the same ones, in other formats). The
// consumer decodes each into a buffer of exactly `uncompressed_size` bytes with the Java codecs
// of pulsar-common (org.apache.pulsar.common.compression.CompressionCodec*):
//   zlib    java.util.zip.Deflater with the zlib wrapper (RFC 1950), not raw deflate or gzip:
//           Node's deflate at level 6, Deflater's default.
//   lz4     the raw LZ4 *block*, no frame (airlift Lz4RawCompressor). lz4-napi's compress is
//           lz4_flex's compress_prepend_size: the block after a 4-byte little-endian size, which
//           is cut off. It replaced weir's own TypeScript compressor, which took 453-548 µs per
//           64 KB JSON batch for 21,970 bytes where lz4-napi takes 53-92 µs for 19,790 (and
//           14-21 µs against 2-3 per 1 KB; docs/benchmarks.md, "pulsar-codecs").
//   zstd    a standard zstd frame at level 3 (airlift ZstdCompressor, ZSTD_COMPRESSION_LEVEL 3):
//           @bokuweb/zstd-wasm, libzstd compiled to WebAssembly.
//   snappy  the raw snappy block with its varint length (airlift SnappyRawCompressor), not the
//           xerial framing Kafka uses nor the snappy stream format: kafkajs-snappy's compress,
//           which is snappyjs's compress unchanged.
// lz4 runs on libuv's thread pool (an napi-rs async task), so that the event loop keeps serving
// ingest and the rules while a batch compresses: per 64 KB batch the loop spends 30 µs on lz4's
// 117 (bench/pulsar-codecs.ts). For a 1 KB batch the hop costs the loop more than lz4 itself
// (17 µs against 2 µs), but small batches only form when the rate is low.
// zlib runs on the calling thread (deflateSync). On the pool it cost more CPU than the deflate
// itself: a 131 KB batch of 127 1 KB telemetry records (the producer's max_bytes) took 3.3-4.6 µs
// of process CPU per message deflated asynchronously, 1.1-2.0 of them on the event loop, against
// 2.3-2.6 µs synchronously (scratch measurement, 400 batches each way, 4 December). weir is sized
// by its CPU per message (one core per replica; the standalone benchmark pins it to one), where
// the pool's thread only competes with the loop; the loop is held ≈ 300 µs per full batch.
// zstd (WebAssembly) and snappy (JavaScript) can only run on the calling thread: 402 and 250 µs
// of the loop per 64 KB batch. Through the real broker (pulsar.perf.int.test.ts, 100,000 1 KB
// messages, one run) they still wrote 129,500 and 155,300 msg/s against zlib's 94,900 (then on the
// pool), with the loop 97-98 % busy against 70 %: choose lz4 where ingest and the rules need the loop.
// Codecs are loaded on first use, so a sink without compression loads none of them.
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { loadZstd } from '../../zstd.js';
import { CompressionCode } from './metadata.js';

export type ProtocolCompression = keyof typeof CompressionCode;

export function compressionCode(c: ProtocolCompression): number {
  return CompressionCode[c];
}

type Compress = (data: Buffer) => Promise<Buffer>;

/** Pulsar's ZSTD_COMPRESSION_LEVEL. */
const ZSTD_LEVEL = 3;
/** lz4_flex's compress_prepend_size writes the uncompressed size first, as a u32. */
const LZ4_SIZE_PREFIX = 4;

const loaders: Record<ProtocolCompression, () => Promise<Compress>> = {
  none: async () => async (data) => data,
  zlib: async () => async (data) => deflateSync(data),
  lz4: async () => {
    const lz4 = await import('lz4-napi');
    return async (data) => (await lz4.compress(data)).subarray(LZ4_SIZE_PREFIX);
  },
  zstd: async () => {
    const zstd = await loadZstd();
    return async (data) => Buffer.from(zstd.compress(data, ZSTD_LEVEL));
  },
  snappy: async () => {
    // A CommonJS module without type declarations: a factory returning kafkajs's codec shape.
    const factory = createRequire(import.meta.url)('kafkajs-snappy') as () => { compress(encoder: { buffer: Buffer }): Promise<Buffer> };
    const codec = factory();
    return (data) => codec.compress({ buffer: data });
  },
};

const loaded = new Map<ProtocolCompression, Promise<Compress>>();

/** Loads codec `c` once per process; the transport awaits it on connect, so a codec that cannot load fails there. */
export function loadCompressor(c: ProtocolCompression): Promise<Compress> {
  let codec = loaded.get(c);
  if (!codec) {
    codec = loaders[c]();
    loaded.set(c, codec);
    codec.catch(() => loaded.delete(c));
  }
  return codec;
}

/** Compresses one batch as Pulsar's codec `c` does. */
export async function compressBatch(c: ProtocolCompression, data: Buffer): Promise<Buffer> {
  return (await loadCompressor(c))(data);
}
