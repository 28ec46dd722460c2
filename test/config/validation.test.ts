// One validation for `weir check` and `weir run`: every bad configuration below is refused by both,
// with the same message naming file:line:col and what to write instead, exit 1 and no stack trace,
// before anything connects. One error per mistake: a misspelled key is one error with "did you
// mean", a YAML syntax error one line.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { didYouMean, editDistance } from '../../src/config/did-you-mean.js';
import { brokerUrlProblem } from '../../src/config/broker-url.js';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

const RULE = `id: r1
sql: SELECT payload.temp AS temp FROM "device/+/telemetry"
actions:
  - sink: db
    table: t
    columns: { temp: '\${temp}' }
`;

/** weir.yaml with `broker` and `sinks` as given (line 1 is `broker:`). */
function config(broker: string, sinks = 'db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir'): string {
  return `broker:\n  client_id: t\n  ${broker}\nsinks:\n  ${sinks}\nhttp: { port: 0 }\n`;
}

function write(cfg: string, rule = RULE): string {
  return join(writeWeirFiles({ config: cfg, rules: { 'r1.yaml': rule } }, 0, tempDir('validate')), 'weir.yaml');
}

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('error: '));
}

/** Runs check and run on the same files; both must fail alike. Returns the error lines. */
async function refusedByBoth(file: string): Promise<string[]> {
  const [check, run] = await Promise.all([runCli(['check', '-c', file]), runCli(['run', '-c', file], { WEIR_LOG_LEVEL: 'error' })]);
  for (const [name, r] of [
    ['check', check],
    ['run', run],
  ] as const) {
    assert.equal(r.code, 1, `${name}: ${r.stdout}${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n +at /, `${name} printed a stack trace`);
    assert.match(r.stderr, /nothing was started/, name);
    assert.doesNotMatch(r.stdout, /weir started/, name);
  }
  assert.deepEqual(errorLines(run.stderr), errorLines(check.stderr), 'check and run report the same errors');
  return errorLines(check.stderr);
}

describe('weir check and weir run refuse the same bad configuration', () => {
  test('broker.url with a wrong scheme (once dialled 127.0.0.1:1883)', async () => {
    const f = write(config('url: htp:/nope'));
    assert.deepEqual(await refusedByBoth(f), [`error: ${f}:3:8: broker.url 'htp:/nope': scheme must be mqtt:// or mqtts:// (TLS), e.g. mqtt://broker:1883`]);
  });

  test('broker.url that is not a URL (once a bare "Invalid URL")', async () => {
    const f = write(config('url: mqtt//host:port'));
    const [line, ...rest] = await refusedByBoth(f);
    assert.deepEqual(rest, []);
    assert.ok(line!.startsWith(`error: ${f}:3:8: broker.url 'mqtt//host:port': not a URL (the scheme ends in "://")`), line);
    assert.match(line!, /e\.g\. mqtt:\/\/broker:1883$/);
  });

  test('broker.url without a host', async () => {
    const f = write(config('url: mqtt://'));
    assert.deepEqual(await refusedByBoth(f), [`error: ${f}:3:8: broker.url 'mqtt://': no host after mqtt://, e.g. mqtt://broker:1883`]);
  });

  test('a PostgreSQL url that is not a URL (once ENOTFOUND retried for ever), the password not shown', async () => {
    const f = write(config('url: mqtt://127.0.0.1:1', 'db:\n    type: postgres\n    url: not a url'));
    const [line, ...rest] = await refusedByBoth(f);
    assert.deepEqual(rest, []);
    assert.ok(line!.startsWith(`error: ${f}:7:10: sinks.db.url 'not a url': not a URL`), line);
    assert.match(line!, /e\.g\. postgres:\/\//);
    const g = write(config('url: mqtt://127.0.0.1:1', 'db:\n    type: postgres\n    url: mysql://weir:s3cret@db/weir'));
    const lines = await refusedByBoth(g);
    assert.deepEqual(lines, [
      `error: ${g}:7:10: sinks.db.url 'mysql://weir:***@db/weir': scheme must be postgres:// or postgresql://, e.g. postgres://weir:\${PG_PASSWORD}@timescaledb:5432/telemetry (a Unix socket: postgres:///telemetry?host=/var/run/postgresql)`,
    ]);
  });

  test('a Kafka sink with idempotent: true and acks: 1 (once a stack trace from weir run)', async () => {
    const kafka =
      'db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\n  k:\n    type: kafka\n    brokers: [127.0.0.1:1]\n    idempotent: true\n    acks: 1';
    const f = write(config('url: mqtt://127.0.0.1:1', kafka));
    assert.deepEqual(await refusedByBoth(f), [
      `error: ${f}:12:11: sinks.k.acks: the idempotent producer needs acks: -1 (all in-sync replicas); write acks: -1, or idempotent: false to keep acks: 1`,
    ]);
  });

  test('dead_letter.sink naming a Kafka sink without dead_letter_topic (once: check ok, run failed with "this sink cannot store dead letters")', async () => {
    const sinks = 'db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\n  k:\n    type: kafka\n    brokers: [127.0.0.1:1]';
    const f = write(`${config('url: mqtt://127.0.0.1:1', sinks)}dead_letter: { sink: k }\n`);
    assert.deepEqual(await refusedByBoth(f), [
      `error: ${f}:12:22: dead_letter.sink: sink 'k' (type kafka) keeps no dead letters with its settings (docs/operations.md, dead letters); name one that does, or write dead_letter: { file: <path> }`,
    ]);
  });

  test('a Pulsar sink: service_url without a host, create_topic and dead_letter_topic without admin_url', async () => {
    const pulsar =
      'db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\n  p:\n    type: pulsar\n    service_url: pulsar://\n    topic: persistent://public/default/t\n    create_topic: if_missing\n    dead_letter_topic: persistent://public/default/letters';
    const f = write(config('url: mqtt://127.0.0.1:1', pulsar));
    assert.deepEqual(await refusedByBoth(f), [
      `error: ${f}:10:18: sinks.p.service_url 'pulsar://': expected pulsar://host:port or pulsar+ssl://host:port, e.g. pulsar://pulsar:6650`,
      `error: ${f}:12:19: sinks.p.create_topic: if_missing creates the topic through the admin REST API: add admin_url, e.g. admin_url: http://pulsar:8080`,
      `error: ${f}:13:24: sinks.p.dead_letter_topic: weir dlq reads the dead-letter topic through the admin REST API: add admin_url, e.g. admin_url: http://pulsar:8080`,
    ]);
  });
});

describe('one error per mistake', () => {
  test("did you mean: 'brokr' and 'max_unaked'", async () => {
    const f = write(config('url: mqtt://127.0.0.1:1').replace('broker:', 'brokr:'));
    assert.deepEqual(await refusedByBoth(f), [`error: ${f}:1:1: brokr: unknown key 'brokr', did you mean 'broker'?`]);
    const g = write(config('max_unaked: 100'));
    assert.deepEqual(await refusedByBoth(g), [`error: ${g}:3:3: broker.max_unaked: unknown key 'max_unaked', did you mean 'max_unacked'?`]);
  });

  test('a misspelled required key is not also reported missing', async () => {
    const f = write(config('url: mqtt://127.0.0.1:1', 'db:\n    type: postgres\n    ulr: postgres://weir@127.0.0.1:1/weir'));
    assert.deepEqual(await refusedByBoth(f), [`error: ${f}:7:5: sinks.db.ulr: unknown key 'ulr', did you mean 'url'?`]);
  });

  test('a YAML syntax error is one error line, even where the parser finds several', async () => {
    const f = write(config('url: mqtt://127.0.0.1:1\n    max_unacked: 3'));
    const lines = await refusedByBoth(f);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.ok(lines[0]!.startsWith(`error: ${f}:3:8: `), lines[0]);
    const rule = RULE.replace(`columns: { temp: '\${temp}' }`, 'columns: { temp: ${temp} }');
    const g = write(config('url: mqtt://127.0.0.1:1'), rule);
    const [line, ...rest] = await refusedByBoth(g);
    assert.deepEqual(rest, []);
    assert.match(line!, /rules\/r1\.yaml:6:\d+: .*\(in flow style \{ … \} quote templates and environment references: '\$\{…\}'\)$/);
  });

  test('an unset variable is reported once, not again as the empty value it left', async () => {
    const f = write(config('url: mqtt://127.0.0.1:1').replace('client_id: t', 'client_id: ${WEIR_T_UNSET_ID}'));
    assert.deepEqual(await refusedByBoth(f), [
      `error: ${f}:2:14: environment variable WEIR_T_UNSET_ID is not set (write \${WEIR_T_UNSET_ID:-default} to give a default)`,
    ]);
  });

  test('a mapping where a list belongs (once silently an empty list: a rule without actions)', async () => {
    const rule = RULE.replace("  - sink: db\n    table: t\n    columns: { temp: '${temp}' }", "  sink: db\n  table: t\n  columns: { temp: '${temp}' }");
    assert.notEqual(rule, RULE);
    const f = write(config('url: mqtt://127.0.0.1:1'), rule);
    assert.deepEqual(await refusedByBoth(f), [
      `error: ${join(f, '..', 'rules', 'r1.yaml')}:4:3: actions: expected a list (one "- " item per line), got a mapping`,
    ]);
  });

  test('a sink of unknown type: its rules are not reported again for naming it', async () => {
    const f = write(config('url: mqtt://127.0.0.1:1', 'db:\n    type: postgress\n    url: postgres://weir@127.0.0.1:1/weir'));
    const lines = await refusedByBoth(f);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /weir\.yaml:6:11: sinks\.db\.type: unknown sink type 'postgress'/);
  });
});

describe('the pieces', () => {
  test('editDistance and didYouMean', () => {
    assert.equal(editDistance('max_unaked', 'max_unacked'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(didYouMean('brokr', ['broker', 'sinks']), 'broker');
    assert.equal(didYouMean('conections', ['connections', 'client_id']), 'connections');
    assert.equal(didYouMean('frobnicate', ['broker', 'sinks']), undefined);
    assert.equal(didYouMean('x', ['id']), undefined, 'not more edits than the key is long');
  });

  test('broker URLs: the schemes the MQTT session speaks', () => {
    for (const ok of ['mqtt://b:1883', 'mqtts://b:8883', 'ssl://b', 'tls://[::1]:8883', 'mqtt://127.0.0.1']) assert.equal(brokerUrlProblem(ok), undefined, ok);
    for (const bad of ['htp:/nope', 'mqtt//host:port', 'mqtt://host:port', 'mqtt://', 'ws://b:8083', 'b:1883']) assert.ok(brokerUrlProblem(bad), bad);
  });
});
