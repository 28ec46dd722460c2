// weir.yaml's `schemas:` through the config loader (weir check and weir run share it): a schema
// that does not parse is an error at its own file:line, one without a line at its entry in
// weir.yaml; a rule's payload_schema must name a schema; a rule's literal schema name too.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigErrors, loadConfig, loadRules, loadSchemas } from '../../src/config/load.js';
import type { ConfigError } from '../../src/errors.js';
import { createMessageContext } from '../../src/rules/index.js';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

const RULE = (extra: string) => `id: r1
${extra}
sql: SELECT schema_decode('tele', payload) AS d FROM "t/#"
actions:
  - sink: db
    table: t
    columns: { d: '\${d}' }
`;

function files(schemas: string, rule = RULE('payload_schema: tele'), proto = 'syntax = "proto3";\nmessage T { int32 x = 1; }\n'): string {
  const dir = tempDir('weir-schema-config-');
  writeFileSync(join(dir, 'tele.proto'), proto);
  const cfg = `broker:\n  client_id: t\nsinks:\n  db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\nschemas:\n${schemas}\nhttp: { port: 0 }\n`;
  return join(writeWeirFiles({ config: cfg, rules: { 'r1.yaml': rule } }, 0, dir), 'weir.yaml');
}

const errorsOf = (file: string): string[] => {
  try {
    loadConfig(file);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigErrors, String(err));
    return err.errors.map((e) => e.message);
  }
};

test('a valid protobuf schema loads and a rule uses it', () => {
  const f = files('  tele: { type: protobuf, file: tele.proto, message_type: T }');
  const cfg = loadConfig(f);
  assert.deepEqual(cfg.schemas.names(), ['tele']);
  assert.equal(cfg.rules[0]!.payloadCheck!(Buffer.from([0x08, 0x01])), undefined);
  assert.match(cfg.rules[0]!.payloadCheck!(Buffer.from([0x08])) ?? '', /^tele: /);
});

test('a .proto that does not parse: the error is at the .proto file:line', () => {
  const f = files('  tele: { type: protobuf, file: tele.proto, message_type: T }', undefined, 'syntax = "proto3";\nmessage T {\n  int32 x = ;\n}\n');
  const [e, ...rest] = errorsOf(f);
  assert.match(e!, /tele\.proto:3:1: schema 'tele': illegal id ';'/);
  // The rule naming the schema is not reported again for the same mistake.
  assert.ok(rest.every((r) => !/payload_schema/.test(r)) || rest.length <= 2, rest.join('\n'));
});

test('a missing file and an unknown message_type: at their key in weir.yaml', () => {
  const f = files('  tele: { type: protobuf, file: nope.proto }\n  other: { type: protobuf, file: tele.proto, message_type: Nope }', RULE(''));
  const errs = errorsOf(f);
  assert.ok(
    errs.some((e) => e.includes(`${f}:8:`) && /schemas\.tele\.file: schema 'tele': no such file/.test(e)),
    errs.join('\n'),
  );
  assert.ok(
    errs.some((e) => e.includes(`${f}:9:`) && /schemas\.other\.message_type: schema 'other': no message type 'Nope'/.test(e)),
    errs.join('\n'),
  );
});

test('payload_schema naming no schema, and a literal schema name that is not configured', () => {
  const f = files('  other: { type: json, file: tele.json }', RULE('payload_schema: tele'));
  writeFileSync(join(f, '..', 'tele.json'), '{"type":"object"}');
  const errs = errorsOf(f);
  assert.ok(
    errs.some((e) => /r1\.yaml:2:\d+: payload_schema: no schema named 'tele' in weir.yaml \(schemas: other\)/.test(e)),
    errs.join('\n'),
  );
  assert.ok(
    errs.some((e) => /r1\.yaml:\d+:\d+: .*no schema named 'tele'/.test(e) && !/payload_schema/.test(e)),
    errs.join('\n'),
  );
});

test('weir check reports a schema error with exit 1', async () => {
  const f = files('  tele: { type: avro, file: tele.proto }', RULE(''));
  const r = await runCli(['check', '-c', f]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /schema 'tele': not JSON/);
});

test('a rule reload reads the schema files again and keeps the Sparkplug aliases learnt', () => {
  const f = files('  tele: { type: protobuf, file: tele.proto, message_type: T }', RULE(''));
  const cfg = loadConfig(f);
  const before = cfg.schemas.decode('tele', Buffer.from([0x08, 0x01, 0x10, 0x02]), undefined);
  assert.deepEqual(before, { x: 1 });
  cfg.schemas.spbDecode(cfg.schemas.spbEncode({ seq: 0, metrics: [{ name: 'm', alias: 1, datatype: 3, int_value: 1 }] }), 'spBv1.0/g/NBIRTH/e');
  writeFileSync(join(f, '..', 'tele.proto'), 'syntax = "proto3";\nmessage T { int32 x = 1; int32 y = 2; }\n');
  // What Runtime.reloadRules does (core/app/runtime.ts).
  const errors: ConfigError[] = [];
  const schemas = loadSchemas(cfg.schemaEntries, cfg.file, cfg.schemas.sparkplugAliases, errors);
  const rules = loadRules(cfg.rulesDir, cfg.sinks, errors, { schemas });
  assert.deepEqual(errors, []);
  assert.deepEqual(schemas.decode('tele', Buffer.from([0x08, 0x01, 0x10, 0x02]), undefined), { x: 1, y: 2 });
  const out = rules[0]!.compiled.evaluate(createMessageContext({ topic: 't/1', payload: Buffer.from([0x08, 0x01, 0x10, 0x02]) }), 'r1');
  assert.deepEqual(out, { matched: true, outputs: [{ d: { x: 1, y: 2 } }] });
  const data = schemas.spbDecode(schemas.spbEncode({ seq: 1, metrics: [{ alias: 1, datatype: 3, int_value: 2 }] }), 'spBv1.0/g/NDATA/e') as {
    metrics: { name?: string }[];
  };
  assert.equal(data.metrics[0]!.name, 'm', 'the alias learnt before the reload');
});

test('payload_schema naming a protobuf schema without message_type is refused: it could check nothing', () => {
  const f = files('  tele: { type: protobuf, file: tele.proto }', RULE('payload_schema: tele'));
  const errs = errorsOf(f);
  assert.ok(
    errs.some((e) => /payload_schema: schema 'tele' has no message_type/.test(e)),
    errs.join('\n'),
  );
});
