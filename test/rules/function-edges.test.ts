// Edge cases per function family beyond the registry examples: absent and null arguments, bytes
// that are not text, units, options.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext } from '../../src/rules/index.js';
import { toJsonValue } from '../../src/rules/values/json-out.js';
import { baseEvent } from './helpers.js';

// Local time is UTC here so the RFC 3339 cases do not depend on the host's zone.
process.env.TZ = 'UTC';

const ERR = Symbol('error');
async function value(expr: string): Promise<unknown> {
  try {
    const res = await compileSql(`SELECT ${expr} AS r FROM "#"`).evaluate(createMessageContext(baseEvent()), 'r');
    return res.matched ? toJsonValue(res.outputs[0]?.r) : 'no match';
  } catch {
    return ERR;
  }
}

const CASES: Record<string, [string, unknown][]> = {
  math: [
    ['round(2.5)', 3],
    ['ceil(-0.5)', -0],
    ['power(2, 0.5)', Math.SQRT2],
    ['fmod(5.5, 2)', 1.5],
    ['abs(payload.nope)', ERR],
    ["sqrt('4')", ERR],
  ],
  type: [
    ["int('12.7')", 12],
    ['int(true)', 1],
    ["str(float('1'))", '1.0'],
    ['str(1 / 1)', '1.0'],
    ['is_float(2.0 + 1)', true],
    ['str(2 * 3)', '6'],
    ["bool('TRUE')", ERR],
    ['str(payload.a)', '{"b":2}'],
    ['str(payload.n)', 'null'],
    ['is_null(null())', true],
    ["map('[1]')", ERR],
    ['float2str(0.1, 3)', '0.1'],
  ],
  string: [
    ["split('', '/')", []],
    ["split('a//b', '/')", ['a', 'b']],
    ["split('a/b', '')", ['a/b']],
    ["substr('héllo', 1, 2)", 'él'],
    ['upper(payload.n)', ERR],
    ['upper(true)', 'TRUE'],
    ["pad('abcdef', 3)", 'abcdef'],
    ["replace('aaa', '', 'x')", 'aaa'],
    ["concat('a', payload.nope)", 'aundefined'],
    ["sprintf('~s', 'a', 'b')", ERR],
    ["sprintf('~5s|~-3s|', 'ab', 'c')", '   ab|c  |'],
    ["tokens('', ',')", []],
    ["find('', 'a')", ''],
    ["regex_replace('aXbX', 'X', '[&]')", 'a[X]b[X]'],
    ["regex_match('ABC', '(?i)abc')", true],
    ["trim(unescape('\\t x \\n'))", 'x'],
  ],
  map: [
    ["map_get('a.b', payload.s)", undefined],
    ["map_get('k', payload.s)", 5],
    ["map_put('a', payload.nope, map_new())", {}],
    ['map_keys(\'{"z":1}\')', ['z']],
    ["map_get('x', 'nope')", undefined],
  ],
  array: [
    ['first([])', ERR],
    ['nth(1, payload.x)', ERR],
    ['contains(payload.a, [payload.a])', true],
    ['sublist(0, 2, [1])', ERR],
    ['length(payload.s)', ERR],
  ],
  hash: [
    ["md5(hexstr2bin('ff'))", '00594fd4f42ba43fc1ca0427a0576295'],
    ['md5(1)', ERR],
    ["hash('sha3_256', '')", 'a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a'],
  ],
  encode: [
    ["base64_encode(hexstr2bin('fbff'))", '+/8='],
    ["base64_encode(hexstr2bin('fbff'), 'urlsafe', 'no_padding')", '-_8'],
    ["base64_decode('-_8', 'urlsafe', 'no_padding')", { $hex: 'fbff' }],
    ['json_encode(payload.nope)', 'null'],
    ["json_encode(hexstr2bin('41'))", '"A"'],
    ["bin2hexstr('')", ''],
  ],
  bits: [
    ["subbits(hexstr2bin('8000'), 1, 16, 'integer', 'signed')", -32768],
    ["subbits(hexstr2bin('3C00'), 1, 16, 'float')", 1],
    ["subbits('a', 3, 99)", 33],
    ["subbits('ab', 1, 16, 'bits')", 'ab'],
    ['bitand(4294967296 + 1, 4294967297)', 4294967297],
    ['bitnot(payload.f)', ERR],
  ],
  compress: [
    ["gunzip(gzip(hexstr2bin('ff00')))", { $hex: 'ff00' }],
    ["zip_uncompress(zip_compress(''))", ''],
    ["unzip('not deflate')", ERR],
  ],
  time: [
    ["unix_ts_to_rfc3339(0, 'nanosecond')", '1970-01-01T00:00:00.000000000+00:00'],
    ["rfc3339_to_unix_ts('1970-01-01T00:00:01.5Z', 'microsecond')", 1500000],
    ["format_date('second', 3600, '%Y %::z', 0)", '1970 +01:00:00'],
    ["format_date('day', 'Z', '%Y', 0)", ERR],
    ["date_to_unix_ts('millisecond', '%Y-%m-%dT%H:%M:%S.%3N%z', '2020-01-01T00:00:00.250+0100')", 1577833200250],
    ["now_timestamp('fortnight')", ERR],
  ],
  misc: [
    ['coalesce(payload.n, payload.nope)', null],
    ['coalesce(payload.nope, payload.nope)', undefined],
    ["coalesce_ne(payload.nope, '', 0)", 0],
    ['eq(payload.a, json_decode(\'{"b":2}\'))', true],
  ],
};

for (const [family, cases] of Object.entries(CASES)) {
  test(`function edge cases: ${family}`, async () => {
    for (const [expr, want] of cases) {
      const got = await value(expr);
      if (want === ERR) assert.equal(got, ERR, `${expr} should fail, gave ${JSON.stringify(got)}`);
      else assert.deepEqual(got, want, expr);
    }
  });
}
