// Erlang's bitstring: a binary whose size in bits is not a multiple of 8. subbits(b, s, n,
// 'bits') makes one when n is not whole bytes (EMQX: subbits over 6 bits, then bin2hexstr).
// Held as the bits left-aligned in bytes, the last byte padded with zero bits, so that every
// function that takes bytes still can; bitsize, subbits and bin2hexstr read the exact size.

export class BitString extends Uint8Array {
  /** Slices and maps of a BitString are plain bytes: their size in bits is not known. */
  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  constructor(
    bytes: Uint8Array,
    readonly bitSize: number,
  ) {
    super(bytes);
  }
}

/** Size in bits of a byte string or bitstring. */
export function bitSizeOf(b: Uint8Array): number {
  return b instanceof BitString ? b.bitSize : b.length * 8;
}

/** Reads `len` bits from `buf` starting at bit `start` (0-based), most significant first. */
export function readBits(buf: Uint8Array, start: number, len: number): bigint {
  let v = 0n;
  for (let i = 0; i < len; i++) {
    const bit = start + i;
    const byte = buf[bit >> 3] as number;
    v = (v << 1n) | BigInt((byte >> (7 - (bit & 7))) & 1);
  }
  return v;
}

/** `n` bits of value `v` as a BitString (or plain bytes when n is whole bytes). */
export function bitsOf(v: bigint, n: number): Uint8Array {
  const bytes = Math.ceil(n / 8);
  let x = v << BigInt(bytes * 8 - n);
  const out = Buffer.alloc(bytes);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return n % 8 === 0 ? out : new BitString(out, n);
}

/**
 * Upper-case hex of bytes or bits. A bitstring is padded with zero bits in front to whole bytes
 * and, when the padding is 4 bits or more, the leading hex digit (all padding) is dropped:
 * <<1:4, 2>> is "102", <<2:2>> is "2" (emqx_variform_bif:bin2hexstr).
 */
export function hexOfBits(b: Uint8Array): string {
  const n = bitSizeOf(b);
  if (n % 8 === 0) return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex').toUpperCase();
  const hex = readBits(b, 0, n)
    .toString(16)
    .toUpperCase()
    .padStart(Math.ceil(n / 8) * 2, '0');
  return 8 - (n % 8) >= 4 ? hex.slice(1) : hex;
}
