// Bit operations on integers (exact, through BigInt, not JavaScript's 32-bit operators) and
// subbits: a field of bits read from a byte string as an integer, a float or bits.
import { RuleEvalError } from '../errors.js';
import { needBytes, needInt, needOption } from './args.js';
import { bitsOf, bitSizeOf, readBits } from './bitstring.js';
import { def, type FunctionSpec } from './registry.js';

const MAX_SHIFT = 1024;

function big(fn: string, v: unknown): bigint {
  return BigInt(needInt(fn, v));
}

function num(b: bigint): number {
  return Number(b);
}

function subbits(bits: unknown, a: unknown, b?: unknown, type?: unknown, sign?: unknown, endian?: unknown): unknown {
  const buf = needBytes('subbits', bits);
  const [start, len] = b === undefined ? [1, needInt('subbits', a)] : [needInt('subbits', a), needInt('subbits', b)];
  const t = type === undefined ? 'integer' : needOption('subbits', type, ['integer', 'float', 'bits'] as const);
  const signed = (sign === undefined ? 'unsigned' : needOption('subbits', sign, ['unsigned', 'signed'] as const)) === 'signed';
  const little = (endian === undefined ? 'big' : needOption('subbits', endian, ['big', 'little'] as const)) === 'little';
  if (start < 1 || len < 0) throw new RuleEvalError('rule.bad_argument', 'subbits: start must be at least 1 and length not negative');
  const total = bitSizeOf(bits instanceof Uint8Array ? bits : buf);
  const begin = start - 1;
  if (begin >= total) return undefined;
  // Fewer bits left than asked for: EMQX takes what remains.
  const n = Math.min(len, total - begin);
  if (n > 4096) throw new RuleEvalError('rule.limit', 'subbits: more than 4096 bits');
  let v = readBits(buf, begin, n);
  if (t === 'bits') return bitsOf(v, n);
  if (little) {
    // Erlang's little-endian field: whole bytes least significant first, then the bits left over
    // (n mod 8) as the most significant part: <<16#BC, 16#A:4>> read as 12 bits is 16#ABC.
    const full = Math.floor(n / 8);
    v = readBits(buf, begin + full * 8, n % 8);
    for (let i = full - 1; i >= 0; i--) v = (v << 8n) | readBits(buf, begin + i * 8, 8);
  }
  if (t === 'float') {
    const bytes = Buffer.alloc(8);
    if (n === 64) {
      bytes.writeBigUInt64BE(v);
      return bytes.readDoubleBE(0);
    }
    if (n === 32) {
      bytes.writeUInt32BE(Number(v));
      return bytes.readFloatBE(0);
    }
    if (n === 16) return halfFloat(Number(v));
    throw new RuleEvalError('rule.bad_argument', 'subbits: a float is 16, 32 or 64 bits');
  }
  if (signed && n > 0 && (v >> BigInt(n - 1)) & 1n) v -= 1n << BigInt(n);
  return num(v);
}

function halfFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) throw new RuleEvalError('rule.arith_error', 'subbits: the half float is not finite');
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

export const BITS_FUNCTIONS: FunctionSpec[] = [
  ...def('bits', 'bitnot(int): int', 'Bitwise not.', (x: unknown) => num(~big('bitnot', x)), { examples: [{ call: 'bitnot(5)', result: -6 }] }),
  ...def('bits', 'bitand(int, int): int', 'Bitwise and.', (x: unknown, y: unknown) => num(big('bitand', x) & big('bitand', y)), {
    examples: [{ call: 'bitand(12, 10)', result: 8 }],
  }),
  ...def('bits', 'bitor(int, int): int', 'Bitwise or.', (x: unknown, y: unknown) => num(big('bitor', x) | big('bitor', y)), {
    examples: [{ call: 'bitor(12, 10)', result: 14 }],
  }),
  ...def('bits', 'bitxor(int, int): int', 'Bitwise exclusive or.', (x: unknown, y: unknown) => num(big('bitxor', x) ^ big('bitxor', y)), {
    examples: [{ call: 'bitxor(12, 10)', result: 6 }],
  }),
  ...def(
    'bits',
    'bitsl(int, int): int',
    'Shift left.',
    (x: unknown, i: unknown) => {
      const n = needInt('bitsl', i);
      if (Math.abs(n) > MAX_SHIFT) throw new RuleEvalError('rule.limit', `bitsl: shift larger than ${MAX_SHIFT}`);
      return num(n >= 0 ? big('bitsl', x) << BigInt(n) : big('bitsl', x) >> BigInt(-n));
    },
    { examples: [{ call: 'bitsl(1, 40)', result: 1099511627776 }] },
  ),
  ...def(
    'bits',
    'bitsr(int, int): int',
    'Arithmetic shift right.',
    (x: unknown, i: unknown) => {
      const n = needInt('bitsr', i);
      if (Math.abs(n) > MAX_SHIFT) throw new RuleEvalError('rule.limit', `bitsr: shift larger than ${MAX_SHIFT}`);
      return num(n >= 0 ? big('bitsr', x) >> BigInt(n) : big('bitsr', x) << BigInt(-n));
    },
    { examples: [{ call: 'bitsr(-16, 2)', result: -4 }] },
  ),
  ...def('bits', 'bitsize(binary): int', 'Size in bits.', (b: unknown) => bitSizeOf(b instanceof Uint8Array ? b : needBytes('bitsize', b)), {
    examples: [
      { call: "bitsize('abc')", result: 24 },
      { call: "bitsize(subbits(hexstr2bin('FF'), 1, 4, 'bits'))", result: 4 },
    ],
  }),
  ...def('bits', 'bytesize(binary): int', 'Size in bytes.', (b: unknown) => needBytes('bytesize', b).length, {
    examples: [{ call: "bytesize('héllo')", result: 6 }],
  }),
  ...def(
    'bits',
    'subbits(binary, int, int?, string?, string?, string?): any',
    "Bits from a 1-based bit offset: subbits(b, len), subbits(b, start, len[, 'integer'|'float'|'bits'[, 'unsigned'|'signed'[, 'big'|'little']]]).",
    subbits,
    {
      examples: [
        { call: "subbits('abc', 8)", result: 97 },
        { call: "subbits('abc', 9, 8)", result: 98 },
        { call: "subbits('abc', 17, 8)", result: 99 },
        { call: "subbits('abc', 9, 16, 'integer', 'signed', 'big')", result: 25187 },
        { call: "subbits('abc', 9, 16, 'integer', 'signed', 'little')", result: 25442 },
        { call: "subbits(hexstr2bin('FF'), 1, 8, 'integer', 'signed')", result: -1 },
        { call: "subbits(hexstr2bin('BCA0'), 1, 12, 'integer', 'unsigned', 'little')", result: 0xabc },
        { call: "subbits(hexstr2bin('BC80'), 1, 12, 'integer', 'signed', 'little')", result: -1860 },
        { call: "subbits(hexstr2bin('3FF0000000000000'), 1, 64, 'float')", result: 1 },
        { call: "subbits('a', 9, 8)", result: undefined },
        { call: "bin2hexstr(subbits(hexstr2bin('9F4E58'), 1, 6, 'bits'))", result: '27' },
      ],
    },
  ),
];
