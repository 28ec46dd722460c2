// Unit tests of the protocol transport's batch codecs (src/sinks/pulsar/protocol/compression.ts):
// each output decodes back to its input, LZ4 and snappy with decoders written here from the
// format descriptions (so a framed or size-prefixed output fails), zlib with Node's inflate, zstd
// with the same library (its frame magic checked). That the broker's Java codecs read them is
// checked against the real broker in pulsar.int.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { loadZstd } from '../../src/sinks/zstd.js';
import { compressBatch, type ProtocolCompression } from '../../src/sinks/pulsar/protocol/compression.js';

/** LZ4 block format: tokens of literal length and match length, 2-byte offsets, no frame. */
function lz4Decode(src: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  let ip = 0;
  let op = 0;
  const length = (n: number) => {
    if (n < 15) return n;
    for (;;) {
      const b = src[ip++]!;
      n += b;
      if (b !== 255) return n;
    }
  };
  for (;;) {
    const token = src[ip++]!;
    const lit = length(token >> 4);
    src.copy(out, op, ip, ip + lit);
    ip += lit;
    op += lit;
    if (ip >= src.length) break;
    const offset = src[ip]! | (src[ip + 1]! << 8);
    ip += 2;
    const ml = length(token & 15) + 4;
    for (let i = 0; i < ml; i++, op++) out[op] = out[op - offset]!;
  }
  assert.equal(op, size, 'decoded size');
  return out;
}

/** Raw snappy: a varint of the uncompressed length, then literals and copies by tag type. */
function snappyDecode(src: Buffer): Buffer {
  let ip = 0;
  let size = 0;
  for (let shift = 0; ; shift += 7) {
    const b = src[ip++]!;
    size += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  const out = Buffer.alloc(size);
  let op = 0;
  const le = (n: number) => {
    let v = 0;
    for (let i = 0; i < n; i++) v += src[ip++]! * 2 ** (8 * i);
    return v;
  };
  while (ip < src.length) {
    const tag = src[ip++]!;
    let len: number;
    let offset: number;
    if ((tag & 3) === 0) {
      len = tag >> 2;
      len = (len < 60 ? len : le(len - 59)) + 1;
      op += src.copy(out, op, ip, ip + len);
      ip += len;
      continue;
    }
    if ((tag & 3) === 1) {
      len = 4 + ((tag >> 2) & 7);
      offset = ((tag >> 5) << 8) | src[ip++]!;
    } else {
      len = (tag >> 2) + 1;
      offset = le((tag & 3) === 2 ? 2 : 4);
    }
    for (let i = 0; i < len; i++, op++) out[op] = out[op - offset]!;
  }
  assert.equal(op, size, 'decoded size');
  return out;
}

const INPUTS = [
  Buffer.from('a'),
  Buffer.from('abcabcabcabcabcabc'),
  Buffer.alloc(13, 7),
  Buffer.alloc(100_000, 1),
  Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) & 0xff)),
  Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ seq: i, device: `dev-${i % 17}`, temp: 20 + (i % 9), nonce: (i * 2654435761) % 1e9 })))),
];
const JSON_BATCH = INPUTS[5]!;

describe('protocol transport codecs', () => {
  /** The process's one zstd instance, the one the sinks use (src/sinks/zstd.ts). */
  let zstd: Awaited<ReturnType<typeof loadZstd>> | undefined;
  const decoders: Record<ProtocolCompression, (c: Buffer, size: number) => Buffer> = {
    none: (c) => c,
    zlib: (c) => inflateSync(c),
    lz4: lz4Decode,
    zstd: (c) => Buffer.from(zstd!.decompress(c)),
    snappy: (c) => snappyDecode(c),
  };
  for (const [codec, decode] of Object.entries(decoders) as [ProtocolCompression, (c: Buffer, size: number) => Buffer][]) {
    it(`${codec}: short, random, repetitive and long inputs decode back byte-identical`, async () => {
      zstd ??= await loadZstd();
      for (const input of INPUTS) {
        const c = await compressBatch(codec, input);
        assert.ok(decode(c, input.length).equals(input), `length ${input.length}`);
      }
      if (codec !== 'none') {
        const c = await compressBatch(codec, JSON_BATCH);
        assert.ok(c.length < JSON_BATCH.length / 2, `JSON batch of ${JSON_BATCH.length} bytes compressed to ${c.length}`);
      }
    });
  }
  it('lz4 writes the bare block: no size prefix, the last 5 bytes as literals (block end rule)', async () => {
    const input = INPUTS[1]!;
    const c = await compressBatch('lz4', input);
    assert.notEqual(c.readUInt32LE(0), input.length, 'no prepended size');
    assert.ok(c.subarray(-5).equals(input.subarray(-5)));
  });
  it('zstd writes a standard frame; snappy the raw block, not xerial or stream framing', async () => {
    assert.equal((await compressBatch('zstd', JSON_BATCH)).readUInt32LE(0), 0xfd2fb528, 'zstd frame magic');
    const s = await compressBatch('snappy', JSON_BATCH);
    assert.notEqual(s[0], 0x82, 'xerial header');
    assert.notEqual(s[0], 0xff, 'stream identifier chunk');
  });
});
