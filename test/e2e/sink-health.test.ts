// A start that tells the truth (operators' issue, item 1), against real Mosquitto and PostgreSQL:
// a sink whose URL points at a closed port is named in a warning within seconds of the start
// (it used to be silent: "weir started", "subscribed", then a stall), and a rule mapping into a
// missing column is logged as a schema error, shown on /sinks and /readyz, holds its messages,
// and stores them all once the column is added.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { freePort, waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id);
});

interface LogLine {
  level: number;
  msg: string;
  sink?: string;
  rule?: string;
  kind?: string;
  err?: string;
}
const WARN = 40;
const ERROR = 50;

function logLines(w: WeirProcess): LogLine[] {
  return w
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

interface SinkStatus {
  name: string;
  ready: boolean;
  state: string;
  reason: string;
  failing: Record<string, { kind: string; error: string }>;
}

async function getJson<T>(w: WeirProcess, path: string): Promise<{ status: number; body: T }> {
  const r = await fetch(`http://127.0.0.1:${w.httpPort}${path}`);
  return { status: r.status, body: (await r.json()) as T };
}

test('a sink at a closed port: a warning names the sink and the reason within seconds, then no line per retry', { timeout: 60_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const closed = await freePort();
  sessions.push([mqttUrl, 'weir-unreachable']);
  const files = telemetryFiles({ mqttUrl, pgUrl: `postgres://weir:secret@127.0.0.1:${closed}/weir`, clientId: 'weir-unreachable' });
  const started = Date.now();
  const weir = await startWeir({ ...files, config: files.config.replace('migrate_on_start: true', '') });
  running.push(weir);
  await waitFor(async () => logLines(weir).some((l) => l.msg.startsWith('sink unreachable')), 5_000, 'the unreachable sink to be logged');
  assert.ok(Date.now() - started < 10_000);
  const [line] = logLines(weir).filter((l) => l.msg.startsWith('sink unreachable'));
  assert.equal(line!.level, WARN);
  assert.equal(line!.sink, 'tsdb');
  assert.match(line!.err!, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closed}`));
  assert.doesNotMatch(weir.log(), /secret/, 'the password is not logged');

  const ready = await getJson<{ ready: boolean; sinks: Record<string, { ready: boolean; state: string; reason: string }> }>(weir, '/readyz');
  assert.equal(ready.status, 503);
  assert.equal(ready.body.sinks.tsdb!.state, 'down');
  assert.match(ready.body.sinks.tsdb!.reason, /ECONNREFUSED/);
  const sinks = await getJson<SinkStatus[]>(weir, '/sinks');
  assert.equal(sinks.body[0]!.state, 'down');
  assert.match(sinks.body[0]!.reason, /ECONNREFUSED/);

  // The connection is retried about every second (retry.max_ms 1000) and probed every 5 s: over
  // 7 s that is a dozen failures, and still the one line (the next reminder is a minute away).
  await new Promise((r) => setTimeout(r, 7_000));
  const warns = logLines(weir).filter((l) => l.sink === 'tsdb' && l.level >= WARN);
  assert.equal(warns.length, 1, JSON.stringify(warns));
  assert.equal(await weir.stop(), 0);
  running.pop();
});

test('a typo in the database name: an error names the sink and says there is no such database', { timeout: 60_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const server = new URL((await sharedPostgres()).url);
  server.pathname = '/weir_no_such_db';
  sessions.push([mqttUrl, 'weir-nodb']);
  const files = telemetryFiles({ mqttUrl, pgUrl: server.href, clientId: 'weir-nodb' });
  const weir = await startWeir({ ...files, config: files.config.replace('migrate_on_start: true', '') });
  running.push(weir);
  await waitFor(async () => logLines(weir).some((l) => l.msg.startsWith('sink unreachable')), 10_000, 'the sink to be logged');
  const [line] = logLines(weir).filter((l) => l.msg.startsWith('sink unreachable'));
  assert.equal(line!.level, ERROR, 'an operator must act');
  assert.equal(line!.sink, 'tsdb');
  assert.match(line!.err!, /^no such database: database "weir_no_such_db" does not exist/);
  const ready = await getJson<{ sinks: Record<string, { state: string; reason: string }> }>(weir, '/readyz');
  assert.equal(ready.status, 503);
  assert.match(ready.body.sinks.tsdb!.reason, /^no such database/);
  assert.equal(await weir.stop(), 0);
  running.pop();
});

test('a rule mapping into a missing column: a schema error on the log, /sinks and /readyz; the messages held, all stored once the column is added', {
  timeout: 120_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  sessions.push([mqttUrl, 'weir-schema']);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-schema' });
  const rule = files.rules['telemetry.yaml']!.replace('      location: ${location}\n', '      location: ${location}\n      site: ${seq}\n');
  assert.notEqual(rule, files.rules['telemetry.yaml'], 'the rule maps the extra column');
  const weir = await startWeir({ ...files, rules: { 'telemetry.yaml': rule } });
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready (the sink answers; nothing written yet)');

  const N = 2_000;
  const pub = await publishLoad({ url: mqttUrl, clients: 2, devices: 20, size: 200, qos: 1, limit: N, clientIdPrefix: 'schema-pub' });
  assert.equal(pub.acked, N);
  await waitFor(async () => logLines(weir).some((l) => l.level === ERROR && l.msg.startsWith('schema error')), 10_000, 'the schema error to be logged');
  // At start, before any message: what weir check --connect says (core/app/log-sink-problems.ts).
  const atStart = logLines(weir).filter((l) => l.level === ERROR && l.msg.startsWith('sink lacks what a rule needs'));
  assert.equal(atStart.length, 1);
  assert.match(atStart[0]!.msg, /rules\/telemetry\.yaml:\d+: rule telemetry_to_tsdb: table telemetry has no column site$/);
  const failing = logLines(weir).filter((l) => l.level === ERROR && l.msg.startsWith('schema error'));
  assert.equal(failing[0]!.sink, 'tsdb');
  assert.equal(failing[0]!.rule, 'telemetry_to_tsdb');
  assert.match(failing[0]!.err!, /telemetry.*site/, 'names the table and the column');

  const sinks = await getJson<SinkStatus[]>(weir, '/sinks');
  assert.equal(sinks.body[0]!.state, 'failing');
  assert.equal(sinks.body[0]!.failing.telemetry_to_tsdb?.kind, 'schema error');
  assert.match(sinks.body[0]!.reason, /^schema error: .*telemetry.*site/);
  const ready = await getJson<{ sinks: Record<string, { state: string; reason: string }> }>(weir, '/readyz');
  assert.equal(ready.status, 503, 'the periodic probe (SELECT 1 answers) does not make it ready');
  assert.equal(ready.body.sinks.tsdb!.state, 'failing');
  assert.equal(await weir.metric('weir_sink_up', 'sink="tsdb"'), 0);

  // Retried (1 s, 2 s, 4 s with this retry policy), logged once, nothing stored or dead-lettered.
  await new Promise((r) => setTimeout(r, 4_000));
  assert.equal(logLines(weir).filter((l) => l.level === ERROR).length, 2, 'the line at start and one schema error, not one per retry');
  assert.ok((await weir.metric('weir_sink_retried_total')) > 0, 'the batches are being retried');
  assert.equal(await countRows(pgUrl), 0);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0, 'held, not dead-lettered');

  await query(pgUrl, 'ALTER TABLE telemetry ADD COLUMN site bigint');
  const fixedAt = Date.now();
  await waitFor(async () => (await countRows(pgUrl)) >= N, 60_000, `all ${N} held messages stored`);
  const [r] = await query<{ n: string; sited: string }>(
    pgUrl,
    'SELECT count(DISTINCT (device_id, seq)) AS n, count(*) FILTER (WHERE site = seq) AS sited FROM telemetry',
  );
  assert.equal(Number(r!.n), N, 'every message stored once');
  assert.equal(Number(r!.sited), N, 'into the new column');
  assert.ok(Date.now() - fixedAt < 40_000, 'resumed within the fatal backoff (≤ 30 s + jitter)');
  await waitFor(() => weir.ready(), 10_000, '/readyz ready again');
  const after = await getJson<SinkStatus[]>(weir, '/sinks');
  assert.equal(after.body[0]!.state, 'up');
  assert.deepEqual(after.body[0]!.failing, {});
  assert.ok(logLines(weir).some((l) => l.msg.startsWith('sink takes this rule')));
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 10_000, 'every message acked');
  assert.equal(await weir.stop(), 0);
  running.pop();
});
