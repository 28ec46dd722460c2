// Compression: gzip (with header), zip (raw deflate), zip_compress (zlib header). Decompression
// output is bounded so that a small payload cannot expand into gigabytes.
import { deflateRawSync, deflateSync, gunzipSync, gzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { payloadText } from '../compile/context.js';
import { RuleEvalError } from '../errors.js';
import { LIMITS } from '../limits.js';
import { needBytes } from './args.js';
import { def, type FunctionSpec } from './registry.js';

function inflate(fn: string, f: (b: Buffer, o: { maxOutputLength: number }) => Buffer) {
  return (v: unknown): string | Buffer => {
    try {
      return payloadText(f(needBytes(fn, v), { maxOutputLength: LIMITS.maxStringBytes }));
    } catch (err) {
      if (err instanceof RuleEvalError) throw err;
      throw new RuleEvalError('rule.bad_argument', `${fn}: ${(err as Error).message}`);
    }
  };
}

export const COMPRESS_FUNCTIONS: FunctionSpec[] = [
  ...def('compress', 'gzip(binary): binary', 'gzip-compressed bytes (with the gzip header and checksum).', (v: unknown) => gzipSync(needBytes('gzip', v)), {
    examples: [{ call: "bin2hexstr(gzip('hello world'))", result: '1F8B0800000000000003CB48CDC9C95728CF2FCA49010085114A0D0B000000' }],
  }),
  ...def('compress', 'gunzip(binary): binary', 'The bytes of gzip-compressed data.', inflate('gunzip', gunzipSync), {
    examples: [
      { call: "gunzip(hexstr2bin('1F8B0800000000000003CB48CDC9C95728CF2FCA49010085114A0D0B000000'))", result: 'hello world' },
      { call: "gunzip('x')", error: true },
    ],
  }),
  ...def('compress', 'zip(binary): binary', 'Raw deflate (no zlib header or checksum).', (v: unknown) => deflateRawSync(needBytes('zip', v)), {
    examples: [{ call: "bin2hexstr(zip('hello world'))", result: 'CB48CDC9C95728CF2FCA490100' }],
  }),
  ...def('compress', 'unzip(binary): binary', 'The bytes of raw-deflated data.', inflate('unzip', inflateRawSync), {
    examples: [{ call: "unzip(hexstr2bin('CB48CDC9C95728CF2FCA490100'))", result: 'hello world' }],
  }),
  ...def('compress', 'zip_compress(binary): binary', 'Deflate with the zlib header and checksum.', (v: unknown) => deflateSync(needBytes('zip_compress', v)), {
    examples: [{ call: "bin2hexstr(zip_compress('hello world'))", result: '789CCB48CDC9C95728CF2FCA4901001A0B045D' }],
  }),
  ...def('compress', 'zip_uncompress(binary): binary', 'The bytes of zlib-deflated data.', inflate('zip_uncompress', inflateSync), {
    examples: [{ call: "zip_uncompress(hexstr2bin('789CCB48CDC9C95728CF2FCA4901001A0B045D'))", result: 'hello world' }],
  }),
];
