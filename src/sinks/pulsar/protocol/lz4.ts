// LZ4 block compression (the raw block format, no frame): what Pulsar's LZ4 codec writes and
// reads (airlift's Lz4RawCompressor; the consumer decompresses into `uncompressed_size` bytes).
// A greedy single-probe compressor: one hash table of 4-byte sequences, as LZ4's fast mode.
// Block rules kept: the last 5 bytes are literals, the last match starts 12+ bytes before the end.

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const HASH_LOG = 14;
const MAX_OFFSET = 65_535;

function writeLength(out: Buffer, op: number, n: number): number {
  while (n >= 255) {
    out[op++] = 255;
    n -= 255;
  }
  out[op++] = n;
  return op;
}

export function lz4CompressBlock(src: Buffer): Buffer {
  const n = src.length;
  const out = Buffer.allocUnsafe(n + Math.ceil(n / 255) + 16);
  const table = new Int32Array(1 << HASH_LOG).fill(-1);
  let op = 0;
  let anchor = 0;
  let ip = 0;
  const matchEndLimit = n - LAST_LITERALS;
  const matchStartLimit = n - MF_LIMIT;

  const emit = (litEnd: number, offset: number, matchLen: number): void => {
    const litLen = litEnd - anchor;
    const ml = matchLen - MIN_MATCH;
    out[op++] = (Math.min(litLen, 15) << 4) | Math.min(ml, 15);
    if (litLen >= 15) op = writeLength(out, op, litLen - 15);
    op += src.copy(out, op, anchor, litEnd);
    out[op++] = offset & 0xff;
    out[op++] = offset >>> 8;
    if (ml >= 15) op = writeLength(out, op, ml - 15);
  };

  while (ip < matchStartLimit) {
    const seq = src.readUInt32LE(ip);
    const h = Math.imul(seq, 2654435761) >>> (32 - HASH_LOG);
    const ref = table[h]!;
    table[h] = ip;
    if (ref < 0 || ip - ref > MAX_OFFSET || src.readUInt32LE(ref) !== seq) {
      ip++;
      continue;
    }
    let len = MIN_MATCH;
    while (ip + len < matchEndLimit && src[ref + len] === src[ip + len]) len++;
    emit(ip, ip - ref, len);
    ip += len;
    anchor = ip;
  }
  const litLen = n - anchor;
  out[op++] = Math.min(litLen, 15) << 4;
  if (litLen >= 15) op = writeLength(out, op, litLen - 15);
  op += src.copy(out, op, anchor, n);
  return out.subarray(0, op);
}
