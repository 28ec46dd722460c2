// Encodings: base64, hex, JSON. Decoders return bytes; bytes that are valid UTF-8 read as
// strings everywhere (comparisons, string functions, JSON output).
import { RuleEvalError } from '../errors.js';
import { toJsonValue } from '../values/json-out.js';
import { parseJson } from '../values/json-floats.js';
import { toJson } from '../values/to-json.js';
import { checkSize, needBytes, needStr } from './args.js';
import { hexOfBits } from './bitstring.js';
import { def, type FunctionSpec } from './registry.js';
import { payloadText } from '../compile/context.js';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function b64opts(fn: string, opts: unknown[]): { urlsafe: boolean; padding: boolean } {
  const o = { urlsafe: false, padding: true };
  for (const v of opts) {
    if (v === undefined) continue;
    const s = needStr(fn, v);
    if (s === 'urlsafe') o.urlsafe = true;
    else if (s === 'no_padding') o.padding = false;
  }
  return o;
}

function base64Encode(data: unknown, o1?: unknown, o2?: unknown): string {
  const o = b64opts('base64_encode', [o1, o2]);
  let s = needBytes('base64_encode', data).toString('base64');
  if (o.urlsafe) s = s.replace(/\+/g, '-').replace(/\//g, '_');
  if (!o.padding) s = s.replace(/=+$/, '');
  return s;
}

function base64Decode(data: unknown, o1?: unknown, o2?: unknown): string | Buffer {
  const o = b64opts('base64_decode', [o1, o2]);
  let s = needStr('base64_decode', data);
  if (o.urlsafe) s = s.replace(/-/g, '+').replace(/_/g, '/');
  if (!o.padding && s.length % 4 !== 0) s += '='.repeat(4 - (s.length % 4));
  // Strict, as Erlang's base64:decode: a bad character or length fails instead of being skipped.
  if (!BASE64.test(s)) throw new RuleEvalError('rule.bad_argument', 'base64_decode: not valid base64');
  return payloadText(Buffer.from(s, 'base64'));
}

function hexToBin(v: unknown, prefix?: unknown): string | Buffer {
  let s = needStr('hexstr2bin', v);
  if (prefix !== undefined) {
    // EMQX compares the prefix byte for byte, case included, and fails when it is not there.
    const p = needStr('hexstr2bin', prefix);
    if (!s.startsWith(p)) throw new RuleEvalError('rule.bad_argument', `hexstr2bin: ${JSON.stringify(s)} does not start with the prefix ${JSON.stringify(p)}`);
    s = s.slice(p.length);
  }
  if (!/^[0-9a-fA-F]*$/.test(s)) throw new RuleEvalError('rule.bad_argument', 'hexstr2bin: not a hex string');
  if (s.length % 2 === 1) s = `0${s}`;
  return payloadText(Buffer.from(s, 'hex'));
}

/** Upper-case hex of bytes (or of a bitstring, see hexOfBits), after an optional prefix. */
function binToHex(v: unknown, prefix?: unknown): string {
  const hex = hexOfBits(v instanceof Uint8Array ? v : needBytes('bin2hexstr', v));
  return prefix === undefined ? hex : needStr('bin2hexstr', prefix) + hex;
}

export function jsonEncode(v: unknown): string {
  const s = toJson(toJsonValue(v === undefined ? null : v));
  checkSize('json_encode', s.length);
  return s;
}

function jsonDecode(v: unknown): unknown {
  const s = needStr('json_decode', v);
  try {
    return parseJson(s);
  } catch (err) {
    throw new RuleEvalError('rule.bad_argument', `json_decode: ${(err as Error).message}`);
  }
}

export const ENCODE_FUNCTIONS: FunctionSpec[] = [
  ...def('encode', 'base64_encode(string, string?, string?): string', "Base64 of the bytes; options 'urlsafe' and 'no_padding'.", base64Encode, {
    examples: [
      { call: "base64_encode('some val')", result: 'c29tZSB2YWw=' },
      { call: "base64_encode('some val', 'no_padding')", result: 'c29tZSB2YWw' },
    ],
  }),
  ...def('encode', 'base64_decode(string, string?, string?): binary', "The bytes of a base64 string; options 'urlsafe' and 'no_padding'.", base64Decode, {
    examples: [
      { call: "base64_decode('c29tZSB2YWw=')", result: 'some val' },
      { call: "base64_decode('%%')", error: true },
    ],
  }),
  ...def(
    'encode',
    'bin2hexstr(binary, string?): string',
    'Upper-case hex of the bytes, after the prefix if one is given; a bitstring is padded in front to whole bytes.',
    binToHex,
    {
      examples: [
        { call: "bin2hexstr('abc')", result: '616263' },
        { call: "bin2hexstr(hexstr2bin('0102'), '0x')", result: '0x0102' },
      ],
    },
  ),
  ...def(
    'encode',
    'sqlserver_bin2hexstr(binary): string',
    'Hex of the bytes with the 0x prefix SQL Server takes for binary literals.',
    (v: unknown) => binToHex(v, '0x'),
    {
      examples: [{ call: "sqlserver_bin2hexstr(hexstr2bin('1121'))", result: '0x1121' }],
    },
  ),
  ...def(
    'encode',
    'hexstr2bin(string, string?): binary',
    'The bytes a hex string spells, after removing the given prefix (an error when it is absent); an odd length gets a leading 0.',
    hexToBin,
    {
      examples: [
        { call: "hexstr2bin('616263')", result: 'abc' },
        { call: "hexstr2bin('zz')", error: true },
        { call: "hexstr2bin('0x616263', '0x')", result: 'abc' },
        { call: "hexstr2bin('616263', '0x')", error: true },
      ],
    },
  ),
  ...def('json', 'json_encode(any): string', 'JSON text of a value.', jsonEncode, {
    examples: [{ call: 'json_encode(json_decode(\'{ "a" : 1 }\'))', result: '{"a":1}' }],
  }),
  ...def('json', 'json_decode(string): any', 'The value of JSON text (invalid JSON is an error).', jsonDecode, {
    examples: [
      { call: "json_decode('[1,2]')", result: [1, 2] },
      { call: "json_decode('{')", error: true },
    ],
  }),
];
