// Acceptance 5 of the foundation: a malformed weir.yaml or rule file makes `weir check` and
// `weir run` exit non-zero naming the file, line and reason; a valid configuration exits 0.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../harness/process.js';
import { ROOT, runCli, writeWeirFiles } from '../harness/weir.js';

const GOOD_CONFIG = `
broker:
  url: mqtt://127.0.0.1:1
sinks:
  db:
    type: postgres
    url: postgres://weir@127.0.0.1:1/weir
http: { port: {{HTTP_PORT}} }
`;
const GOOD_RULE = `
id: r1
sql: SELECT payload.temp AS temp FROM "device/+/telemetry" WHERE payload.temp > 30
actions:
  - sink: db
    table: t
    columns: { temp: '\${temp}' }
`;

function files(config: string, rule = GOOD_RULE): string {
  return join(writeWeirFiles({ config, rules: { 'r1.yaml': rule } }, 0, tempDir('check')), 'weir.yaml');
}

test('the shipped weir.yaml and rules/ pass weir check', async () => {
  const r = await runCli(['check', '--config', join(ROOT, 'weir.yaml')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /ok: .*1 sink\(s\), 1 rule\(s\)/);
});

test('a valid configuration exits 0', async () => {
  const r = await runCli(['check', '-c', files(GOOD_CONFIG)]);
  assert.equal(r.code, 0, r.stderr);
});

test('YAML syntax error: file, line and reason', async () => {
  const cfg = files('broker:\n  url: [unclosed\nsinks: {}\n');
  const r = await runCli(['check', '-c', cfg]);
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes(`${cfg}:`), r.stderr);
  assert.match(r.stderr, /weir\.yaml:\d+:\d+: /);
});

test('unknown key, wrong enum, out-of-range number: each named with file:line:col and key', async () => {
  const cfg = files(`
broker:
  url: mqtt://127.0.0.1:1
  conections: 3
  ack: sometimes
sinks:
  db:
    type: postgres
    url: postgres://x@h/db
    batch: { max_items: 0 }
`);
  const r = await runCli(['check', '-c', cfg]);
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(`${cfg}:4:3: broker.conections: unknown key 'conections'`), r.stderr);
  assert.ok(r.stderr.includes(`${cfg}:5:8: broker.ack: expected one of "after_commit", "on_receive", got "sometimes"`), r.stderr);
  assert.ok(r.stderr.includes(`${cfg}:10:25: sinks.db.batch.max_items: expected a number >= 1, got 0`), r.stderr);
});

test('an unknown sink type and a rule naming a missing sink are reported', async () => {
  const cfg = files(GOOD_CONFIG.replace('type: postgres', 'type: postgress'));
  const r = await runCli(['check', '-c', cfg]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /weir\.yaml:6:11: sinks\.db\.type: unknown sink type 'postgress' \(known: postgres/);
  // The rule naming sink db is not reported again for the same mistake (validation.test.ts).
  const missing = await runCli(['check', '-c', files(GOOD_CONFIG, GOOD_RULE.replace('sink: db', 'sink: dbb'))]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /r1\.yaml:\d+:\d+: actions\.0\.sink: no sink named 'dbb'/);
});

test('rule SQL that does not parse: the rule file, the line and column inside it, and what was expected', async () => {
  const rule = `id: r1
sql: |
  SELECT payload.temp AS temp,
    FROM "device/+/telemetry"
actions:
  - { sink: db, table: t, columns: { temp: '\${temp}' } }
`;
  const cfg = files(GOOD_CONFIG, rule);
  const r = await runCli(['check', '-c', cfg]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /rules\/r1\.yaml:4:5: sql: expected an expression, found 'FROM'\n/);
  assert.ok(!r.stderr.includes('at line 2'), "one location, the file's");
});

test('${ENV} interpolation: defaults apply, an unset variable without default is an error at its line', async () => {
  const cfg = files(GOOD_CONFIG.replace('url: mqtt://127.0.0.1:1', 'url: ${WEIR_T_URL:-mqtt://127.0.0.1:1}\n  client_id: ${WEIR_T_ID}'));
  const unset = await runCli(['check', '-c', cfg], { WEIR_T_ID: '' });
  assert.equal(unset.code, 1);
  assert.match(unset.stderr, /weir\.yaml:4:14: environment variable WEIR_T_ID is not set/);
  const set = await runCli(['check', '-c', cfg], { WEIR_T_ID: 'weir-x' });
  assert.equal(set.code, 0, set.stderr);
});

test('weir run with a malformed config exits non-zero naming the file and line, without connecting', async () => {
  const cfg = files(GOOD_CONFIG.replace('url: mqtt://127.0.0.1:1', 'url: mqtt://127.0.0.1:1\n  connections: many'));
  const r = await runCli(['run', '-c', cfg]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /weir\.yaml:4:16: broker\.connections: expected integer, got "many"/);
  assert.match(r.stderr, /nothing was started/);
});

test('unknown command and unknown option are usage errors (exit 2)', async () => {
  assert.equal((await runCli(['frobnicate'])).code, 2);
  const r = await runCli(['check', '--nope']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Unknown option '--nope'/);
});

test('every command has --help', async () => {
  for (const cmd of ['run', 'check', 'migrate', 'eval', 'test']) {
    const r = await runCli([cmd, '--help']);
    assert.equal(r.code, 0, cmd);
    assert.match(r.stdout, new RegExp(`usage: weir ${cmd}`));
  }
});

test('hypertables: an interval TimescaleDB would not take, then a drop_after not longer than compress_after, are named at their lines', async () => {
  const config = (chunk: string) =>
    GOOD_CONFIG.replace(
      'url: postgres://weir@127.0.0.1:1/weir\n',
      `url: postgres://weir@127.0.0.1:1/weir
    hypertables:
      telemetry:
        chunk_interval: ${chunk}
      readings:
        compression: { segment_by: [device_id], compress_after: 30 days }
        retention: { drop_after: 2 weeks }
`,
    );
  const bad = await runCli(['check', '-c', files(config('one day'))]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /weir\.yaml:10:25: sinks\.db\.hypertables\.telemetry\.chunk_interval: expected text matching .*, got "one day", e\.g\. 1 day/);
  // The settings' own contradiction is checked once their shape is right.
  const early = await runCli(['check', '-c', files(config('1 day'))]);
  assert.equal(early.code, 1);
  assert.match(
    early.stderr,
    /weir\.yaml:13:34: sinks\.db\.hypertables\.readings\.retention\.drop_after '2 weeks': drop_after must be longer than compression\.compress_after \(30 days\)/,
  );
});

test('templates: an unterminated ${ and a name the SQL cannot produce are errors at the rule file line; selected and event names pass', async () => {
  const rule = `
id: r1
sql: SELECT payload.temp AS temp, payload.sensor AS sensor FROM "device/+/telemetry"
actions:
  - sink: db
    table: t
    columns:
      sensor: '\${sensr'
      value: '\${valeu}'
      temp: '\${temp}'
      device: '\${clientid}'
      at: 'x/\${topic}/\${payload.a[1]}'
`;
  const cfg = files(GOOD_CONFIG, rule);
  const r = await runCli(['check', '-c', cfg]);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.match(lines[0]!, /r1\.yaml:8:\d+: actions\.0\.columns\.sensor: unterminated \$\{ in template "\$\{sensr"/);
  assert.match(
    lines[1]!,
    /r1\.yaml:9:\d+: actions\.0\.columns\.value: \$\{valeu\} is neither selected by the rule's SQL nor an event field.*\(the rule selects: temp, sensor\)/,
  );
  assert.equal(lines.length, 3, r.stderr);
});

test('templates: a JSONata rule whose expression never mentions a template name gets a warning, and loads', async () => {
  const rule = `
id: r1
jsonata: '{"temp": payload.temp}'
from: ["device/+/telemetry"]
actions:
  - sink: db
    table: t
    columns: { temp: '\${temp}', hum: '\${hum}', t: '\${timestamp}' }
`;
  const r = await runCli(['check', '-c', files(GOOD_CONFIG, rule)]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /^warning: .*r1\.yaml:8:\d+: actions\.0\.columns\.hum: \$\{hum\} is not an event field and the JSONata expression does not mention it/m,
  );
  assert.doesNotMatch(r.stderr, /temp|timestamp/);
});

test('weir check shows every SQL error of a rule, with hints for SQL habits EMQX does not have', async () => {
  const rule = `
id: r1
sql: SELECT foo(payload.a) AS a, bar_baz(1) AS b, abs(1, 2) AS c FROM "device/+/telemetry"
actions:
  - { sink: db, table: t, columns: { a: '\${a}' } }
`;
  const r = await runCli(['check', '-c', files(GOOD_CONFIG, rule)]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /r1\.yaml:3:\d+: sql: unknown function foo\(\)/);
  assert.match(r.stderr, /r1\.yaml:3:\d+: sql: unknown function bar_baz\(\)/);
  assert.match(r.stderr, /r1\.yaml:3:\d+: sql: abs\(\) does not take 2 argument\(s\)/);
  for (const [sql, hint] of [
    ['SELECT payload.a AS a FROM "device/+/telemetry" WHERE payload.a IS NOT NULL', /is_null\(x\) or is_not_null\(x\)/],
    ['SELECT payload.a AS a -- the reading\n  FROM "device/+/telemetry"', /rule SQL has no comments/],
  ] as const) {
    const bad = await runCli(['check', '-c', files(GOOD_CONFIG, `id: r1\nsql: |\n  ${sql}\nactions:\n  - { sink: db, table: t, columns: { a: '\${a}' } }\n`)]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, hint);
  }
});

test('rule files in subfolders are loaded; a rule with no actions is an error unless disabled', async () => {
  const dir = writeWeirFiles(
    {
      config: GOOD_CONFIG,
      rules: {
        'r1.yaml': GOOD_RULE,
        'site-a/r2.yaml': GOOD_RULE.replace('id: r1', 'id: r2'),
        'site-a/r3.yaml': 'id: r3\nsql: SELECT * FROM "x/#"\nactions: []\n',
        'site-a/r4.yaml': 'id: r4\nenabled: false\nsql: SELECT * FROM "x/#"\n',
        '.old/r5.yaml': 'not: [valid',
      },
    },
    0,
    tempDir('check'),
  );
  const r = await runCli(['check', '-c', join(dir, 'weir.yaml')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /site-a\/r3\.yaml:3:\d+: actions: a rule needs at least one action/);
  assert.equal(r.stderr.trim().split('\n').length, 2, r.stderr);
  rmSync(join(dir, 'rules', 'site-a', 'r3.yaml'));
  const ok = await runCli(['check', '-c', join(dir, 'weir.yaml')]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /3 rule\(s\)/);
});
