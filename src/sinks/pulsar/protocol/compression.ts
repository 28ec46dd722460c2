// Batch compression for the protocol transport. Pulsar's ZLIB codec is java.util.zip.Deflater with
// the zlib wrapper (RFC 1950), not raw deflate or gzip; consumers inflate into a buffer of exactly
// `uncompressed_size` bytes, so a complete zlib stream from Node's deflateSync is accepted.
// LZ4 is the raw LZ4 block format (lz4.ts). ZSTD and SNAPPY need native codecs this transport
// does not carry: use transport: native.
import { deflate, deflateSync } from 'node:zlib';
import { WeirError } from '../../../errors.js';
import { lz4CompressBlock } from './lz4.js';
import { CompressionCode } from './metadata.js';

export type ProtocolCompression = 'none' | 'zlib' | 'lz4';

export const PROTOCOL_COMPRESSIONS: readonly string[] = ['none', 'zlib', 'lz4'];

export function compressionCode(c: ProtocolCompression): number {
  return CompressionCode[c];
}

export function assertProtocolCompression(c: string): asserts c is ProtocolCompression {
  if (!PROTOCOL_COMPRESSIONS.includes(c)) {
    throw new WeirError('sink.pulsar.compression_unsupported', `compression '${c}' needs transport: native (the protocol transport supports ${PROTOCOL_COMPRESSIONS.join(', ')})`);
  }
}

export function compress(c: ProtocolCompression, data: Buffer): Buffer {
  // Level 6 (zlib's default, as Java's Deflater) trades CPU for size like the Java client does.
  if (c === 'zlib') return deflateSync(data);
  return c === 'lz4' ? lz4CompressBlock(data) : data;
}

/** The same on libuv's thread pool, so that the event loop keeps serving while a batch compresses. */
export function compressAsync(c: ProtocolCompression, data: Buffer): Promise<Buffer> {
  if (c !== 'zlib') return Promise.resolve(compress(c, data));
  return new Promise((resolve, reject) => deflate(data, (err, out) => (err ? reject(err) : resolve(out))));
}
