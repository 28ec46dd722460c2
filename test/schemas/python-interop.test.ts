// weir's Protobuf against an independent implementation: Google's Python `protobuf` package
// (with protoc from grpcio-tools) encodes messages that weir decodes, and decodes what weir
// encodes. The same for Sparkplug B, with weir's sparkplug_b.proto compiled by protoc.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { plainNumbers } from '../../src/rules/values/floats.js';
import { SchemaRegistry } from '../../src/schemas/registry.js';
import { SPARKPLUG_PROTO } from '../../src/schemas/sparkplug.js';
import { SparkplugAliases } from '../../src/schemas/sparkplug-aliases.js';
import { tempDir } from '../harness/process.js';
import { pythonWithProtobuf } from '../harness/python-protobuf.js';

const CODEC = fileURLToPath(new URL('./protobuf-codec.py', import.meta.url));
const dir = tempDir('weir-pb-interop-');
const PROTO = join(dir, 'interop.proto');
writeFileSync(
  PROTO,
  `syntax = "proto3";
package acme.v1;
enum Level { LOW = 0; HIGH = 1; }
message Inner { string label = 1; }
message Scalars {
  int64 big = 1; uint64 ubig = 2; double d = 3; float f = 4; bytes raw = 5; Level level = 6;
  Inner inner = 7; repeated int32 list = 8; map<int32, string> by_id = 9; bool on = 10; string s = 11;
  optional int32 maybe = 12;
  oneof pick { int32 a = 13; string b = 14; }
  sint64 neg = 15; fixed32 fx = 16; repeated Inner items = 17;
}
`,
);

let python = '';
before(async () => {
  python = await pythonWithProtobuf();
});

/** Runs the Python codec over lines; its output lines. */
async function py(proto: string, type: string, mode: 'encode' | 'decode', lines: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(python, [CODEC, proto, type, mode], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(stdout.trim().split('\n'));
    });
    child.stdin!.end(`${lines.join('\n')}\n`);
  });
}

const { registry, problems } = SchemaRegistry.load(
  { interop: { type: 'protobuf', file: PROTO, message_type: 'acme.v1.Scalars' } },
  dir,
  new SparkplugAliases(),
);
/** A decoded term as JSON values: bytes as hex, whole floats as numbers. */
const plain = (v: unknown): unknown =>
  plainNumbers(
    JSON.parse(JSON.stringify(v, (_k, x) => (x && x.type === 'Buffer' && Array.isArray(x.data) ? `hex:${Buffer.from(x.data).toString('hex')}` : x))),
  );

const CASES: Array<{ json: object; weir: Record<string, unknown> }> = [
  {
    json: {
      big: '9007199254740993',
      ubig: '18446744073709551615',
      d: 2.5,
      f: 1.5,
      raw: '//79',
      level: 'HIGH',
      inner: { label: 'x' },
      list: [1, -2],
      by_id: { 7: 'seven' },
      on: true,
      s: 'ü ✓',
      maybe: 0,
      a: 5,
      neg: '-3',
      fx: 4294967295,
      items: [{ label: 'i1' }, {}],
    },
    weir: {
      big: '9007199254740993',
      ubig: '18446744073709551615',
      d: 2.5,
      f: 1.5,
      raw: 'hex:fffefd',
      level: 'HIGH',
      inner: { label: 'x' },
      list: [1, -2],
      by_id: { 7: 'seven' },
      on: true,
      s: 'ü ✓',
      maybe: 0,
      a: 5,
      neg: -3,
      fx: 4294967295,
      items: [{ label: 'i1' }, { label: '' }],
    },
  },
  {
    json: {},
    weir: { big: 0, ubig: 0, d: 0, f: 0, raw: 'hex:', level: 'LOW', list: [], by_id: {}, on: false, s: '', neg: 0, fx: 0, items: [] },
  },
  {
    json: { big: '-9007199254740991', b: 'text', d: 1e300, level: 'LOW', by_id: { '-1': '' } },
    weir: {
      big: -9007199254740991,
      ubig: 0,
      d: 1e300,
      f: 0,
      raw: 'hex:',
      level: 'LOW',
      list: [],
      by_id: { '-1': '' },
      on: false,
      s: '',
      b: 'text',
      neg: 0,
      fx: 0,
      items: [],
    },
  },
];

test('the interop schema loads', () => assert.deepEqual(problems, []));

test('Python encodes, weir decodes: every field as EMQX maps it', { timeout: 300_000 }, async () => {
  const hex = await py(
    PROTO,
    'Scalars',
    'encode',
    CASES.map((c) => JSON.stringify(c.json)),
  );
  for (const [i, c] of CASES.entries()) {
    const term = registry.decode('interop', Buffer.from(hex[i]!, 'hex'), undefined);
    assert.deepEqual(plain(term), c.weir, `case ${i}`);
  }
});

test('weir encodes, Python decodes the same message', { timeout: 300_000 }, async () => {
  const terms = CASES.map((c) => {
    const t: Record<string, unknown> = { ...c.weir };
    if (typeof t.raw === 'string') t.raw = Buffer.from(t.raw.slice(4), 'hex');
    return t;
  });
  const hex = terms.map((t) => registry.encode('interop', t, undefined).toString('hex'));
  const decoded = (await py(PROTO, 'Scalars', 'decode', hex)).map((l) => JSON.parse(l));
  // Python writes the JSON mapping from its own decoding: compare with what it was given to encode.
  const reference = (
    await py(
      PROTO,
      'Scalars',
      'decode',
      await py(
        PROTO,
        'Scalars',
        'encode',
        CASES.map((c) => JSON.stringify(c.json)),
      ),
    )
  ).map((l) => JSON.parse(l));
  assert.deepEqual(decoded, reference);
});

const SPB = {
  timestamp: '1700000000123',
  seq: '7',
  metrics: [
    { name: 'bdSeq', datatype: 8, long_value: '3' },
    { name: 'Node Control/Rebirth', alias: '1', datatype: 11, boolean_value: false, timestamp: '1700000000123' },
    { name: 'temp', alias: '2', datatype: 10, double_value: 21.5, properties: { keys: ['unit'], values: [{ type: 12, string_value: 'C' }] } },
    { name: 'blob', alias: '3', datatype: 17, bytes_value: 'AAEC/w==' },
    {
      name: 'table',
      alias: '4',
      datatype: 16,
      dataset_value: { num_of_columns: '2', columns: ['a', 'b'], types: [3, 12], rows: [{ elements: [{ int_value: 1 }, { string_value: 'x' }] }] },
    },
  ],
};

test('Sparkplug B: protoc compiles weir’s sparkplug_b.proto; Python encodes an NBIRTH that spb_decode reads, and reads spb_encode’s', {
  timeout: 300_000,
}, async () => {
  const [hex] = await py(SPARKPLUG_PROTO, 'Payload', 'encode', [JSON.stringify(SPB)]);
  const term = registry.spbDecode(Buffer.from(hex!, 'hex'), 'spBv1.0/g/NBIRTH/e1') as Record<string, unknown>;
  assert.deepEqual(plain(term), {
    timestamp: 1700000000123,
    seq: 7,
    metrics: [
      { name: 'bdSeq', datatype: 8, long_value: 3 },
      { name: 'Node Control/Rebirth', alias: 1, datatype: 11, boolean_value: false, timestamp: 1700000000123 },
      { name: 'temp', alias: 2, datatype: 10, double_value: 21.5, properties: { keys: ['unit'], values: [{ type: 12, string_value: 'C' }] } },
      { name: 'blob', alias: 3, datatype: 17, bytes_value: 'AAEC/w==' },
      {
        name: 'table',
        alias: 4,
        datatype: 16,
        dataset_value: { num_of_columns: 2, columns: ['a', 'b'], types: [3, 12], rows: [{ elements: [{ int_value: 1 }, { string_value: 'x' }] }] },
      },
    ],
  });
  const [back] = await py(SPARKPLUG_PROTO, 'Payload', 'decode', [registry.spbEncode(term).toString('hex')]);
  const [reference] = await py(SPARKPLUG_PROTO, 'Payload', 'decode', [hex!]);
  assert.deepEqual(JSON.parse(back!), JSON.parse(reference!));
});
