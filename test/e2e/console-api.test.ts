// The console's JSON API (/api/, docs/console.md) against a running weir with real Mosquitto and
// PostgreSQL: its counters equal /metrics at the same (quiet) moment; the live proof adds up and
// agrees with the table's ledger; Try it answers what `weir eval` prints; a dead letter PostgreSQL
// refused is listed, shown, replayed once the table is fixed, stored with the message's values,
// and purged; a trace follows published messages step by step; payloads and writes are refused
// to an anonymous client of a port open to all; cross-site POSTs are refused; bad requests get a
// 400 (or 404, 405, 413) with a sentence, never a stack trace.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type {
  LetterActionResult,
  LetterDetail,
  LetterList,
  Overview,
  Reconcile,
  RuleView,
  SinkView,
  TraceState,
  TryResult,
} from '../../src/core/app/console/api.js';
import { parsePrometheus, sumOf } from '../../src/metrics/text.js';
import { consoleClient, type ConsoleClient } from '../harness/console-api.js';
import { tempDir, waitFor } from '../harness/process.js';
import { runCli, type WeirProcess } from '../harness/weir.js';
import { publish, READINGS_DDL, readingsRule, startOnTable } from './dlq-cli.js';
import { endSessions, query } from './fixtures.js';
import { weirEval } from './oracle-round.js';

const running: WeirProcess[] = [];
const sessions: string[] = [];
let mqttUrl = '';
after(async () => {
  for (const w of running) await w.kill();
  for (const id of sessions) await endSessions(mqttUrl, id, 1);
});

/** A weir on the readings rule over a fresh table, its http section replaced by `http`; ended after the tests. */
async function start(clientId: string, http: string, ddl = READINGS_DDL) {
  const started = await startOnTable(clientId, ddl, readingsRule('console'), (c) => c.replace('http: { host: 127.0.0.1, port: {{HTTP_PORT}} }', http));
  mqttUrl = started.mqttUrl;
  running.push(started.weir);
  sessions.push(clientId);
  return started;
}

function noStack(text: string): void {
  assert.doesNotMatch(text, /\n\s+at |\.ts:\d+/, `no stack trace: ${text}`);
}

/** Every rule counter of the API equals its weir_rule_* series; overview and sinks equal theirs. */
function assertEqualsMetrics(metricsText: string, overview: Overview, rules: RuleView[], sinks: SinkView[]): void {
  const samples = parsePrometheus(metricsText);
  const one = (name: string, labels: Record<string, string>) =>
    sumOf(
      samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)),
      name,
    );
  for (const r of rules.filter((x) => x.state === 'running')) {
    const names: Record<keyof RuleView['counters'], string> = {
      matched: 'weir_rule_matched_total',
      passed: 'weir_rule_passed_total',
      failed: 'weir_rule_failed_total',
      'failed.exception': 'weir_rule_failed_exception_total',
      'failed.no_result': 'weir_rule_failed_no_result_total',
      'actions.total': 'weir_rule_actions_total',
      'actions.success': 'weir_rule_actions_success_total',
      'actions.failed': 'weir_rule_actions_failed_total',
    };
    for (const [k, metric] of Object.entries(names)) assert.equal(r.counters[k as keyof RuleView['counters']], one(metric, { rule: r.id }), `${r.id} ${k}`);
  }
  assert.equal(overview.dead_letters_total, sumOf(samples, 'weir_dead_letter_total'), 'dead letters');
  for (const c of overview.connections) {
    assert.equal(c.unacked, one('weir_ingest_unacked', { connection: c.client_id }), `${c.client_id} unacked`);
    assert.equal(c.connected, one('weir_ingest_connected', { connection: c.client_id }) === 1, `${c.client_id} connected`);
  }
  for (const s of sinks) {
    assert.equal(s.in_flight, one('weir_sink_inflight', { sink: s.name }), `${s.name} in flight`);
    assert.equal(s.queued, one('weir_sink_queuing', { sink: s.name }), `${s.name} queued`);
    assert.equal(s.retries, one('weir_sink_retried_total', { sink: s.name }), `${s.name} retries`);
    assert.equal(s.ready, one('weir_sink_up', { sink: s.name }) === 1, `${s.name} up`);
  }
}

async function snapshot(api: ConsoleClient) {
  const [o, r, s] = await Promise.all([api.get<Overview>('/api/overview'), api.get<RuleView[]>('/api/rules'), api.get<SinkView[]>('/api/sinks')]);
  assert.equal(o.status, 200, o.text);
  assert.equal(r.status, 200, r.text);
  assert.equal(s.status, 200, s.text);
  return { overview: o.body, rules: r.body, sinks: s.body };
}

test('on loopback: counters equal /metrics, the proof adds up, Try it is weir eval, a dead letter is replayed and stored, a trace shows each step', {
  timeout: 180_000,
}, async () => {
  const { pgUrl, weir } = await start('weir-console-api', 'http: { host: 127.0.0.1, port: {{HTTP_PORT}} }');
  const api = consoleClient(weir.httpPort);

  // 30 readings, every third too hot for the table's CHECK: 10 dead letters.
  const N = 30;
  const messages = Array.from({ length: N }, (_, i) => ({
    topic: `console/d${i % 3}/reading`,
    payload: JSON.stringify({ seq: i, temp: i % 3 === 0 ? 75.5 : 20.25 }),
  }));
  await publish(mqttUrl, messages);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 30_000, 'weir to ack every message');

  // Quiet now: a view and a scrape agree to the unit, whichever comes first.
  const before = await snapshot(api);
  const metricsText = await api.metrics();
  const afterwards = await snapshot(api);
  assertEqualsMetrics(metricsText, before.overview, before.rules, before.sinks);
  assertEqualsMetrics(metricsText, afterwards.overview, afterwards.rules, afterwards.sinks);
  const rule = before.rules.find((r) => r.id === 'readings')!;
  assert.equal(rule.counters.matched, N);
  assert.equal(rule.counters['actions.success'], 20);
  assert.equal(rule.counters['actions.failed'], 10);
  assert.equal(rule.language, 'sql');
  assert.deepEqual(rule.filters, ['console/+/reading']);
  assert.deepEqual(rule.actions, ['tsdb']);
  assert.equal(before.overview.dead_letters_total, 10);
  assert.deepEqual(before.overview.access, { payloads: true, writes: true, reason: '' });
  assert.equal(before.overview.connections.length, 1);
  assert.equal(before.overview.connections[0]!.max_unacked, 5000);
  assert.ok(before.overview.rss_bytes > 0);
  const sink = before.sinks.find((s) => s.name === 'tsdb')!;
  assert.equal(sink.type, 'postgres');
  assert.equal(sink.state, 'up');
  assert.ok(sink.batch_size >= 1 && sink.write_ms.p99 >= sink.write_ms.p50 && sink.write_ms.p50 > 0, JSON.stringify(sink));

  // The live proof: hits = stored + dead-lettered + in flight, and the table's ledger agrees.
  await waitFor(
    async () => {
      const r = await api.get<Reconcile>('/api/reconcile');
      return r.body.rows[0]?.sink_count !== undefined;
    },
    20_000,
    'the console to count the sink',
  );
  const proof = (await api.get<Reconcile>('/api/reconcile')).body;
  assert.deepEqual(
    proof.rows.map(({ sink_count, sink_difference, ...r }) => r),
    [{ rule: 'readings', sink: 'tsdb', hits: N, stored: 20, dead_lettered: 10, in_flight: 0, difference: 0 }],
  );
  assert.equal(proof.rows[0]!.sink_count, 20);
  assert.equal(proof.rows[0]!.sink_difference, 0);
  assert.equal(proof.ok, true);

  // Try it, SQL: what weir eval prints for the same input.
  const sql = 'SELECT payload.temp * 2 AS double_temp, topic, payload.tags AS tags FROM "console/#" WHERE payload.temp > 10';
  const event = { topic: 'console/d9/reading', payload: '{"temp": 21.5, "tags": ["a", 2.0]}', qos: 1 };
  const [evalLine] = await weirEval([JSON.stringify({ sql, event })]);
  const printed = JSON.parse(evalLine!) as { ok: boolean; matched: boolean; outputs: unknown[] };
  assert.equal(printed.ok, true, evalLine);
  const tried = await api.post<TryResult>('/api/try', { sql, event });
  assert.equal(tried.status, 200, tried.text);
  assert.equal(tried.body.matched, printed.matched);
  assert.deepEqual(tried.body.outputs, printed.outputs);
  assert.deepEqual(tried.body.outputs, [{ double_temp: 43, topic: 'console/d9/reading', tags: ['a', 2] }]);
  const notMatched = await api.post<TryResult>('/api/try', { sql, event: { ...event, payload: '{"temp": 5}' } });
  assert.deepEqual([notMatched.body.matched, notMatched.body.outputs], [false, []]);
  // A syntax error at its line and column.
  const bad = await api.post<TryResult>('/api/try', { sql: 'SELECT a,\n  FROM "x"', event });
  assert.equal(bad.status, 200, bad.text);
  assert.equal(bad.body.error?.line, 2, bad.text);
  assert.equal(bad.body.error?.column, 3, bad.text);
  assert.match(bad.body.error!.message, /^rule\./);
  const [badEval] = await weirEval([JSON.stringify({ sql: 'SELECT a,\n  FROM "x"', event })]);
  assert.match(badEval!, /line 2, column 3/, 'weir eval names the same place');

  // Try it, a running rule: the row each action would write, with the clientid weir run derives from the topic.
  const row = await api.post<TryResult>('/api/try', { rule: 'readings', event: { topic: 'console/dev7/reading', payload: '{"seq": 99, "temp": 30.5}' } });
  assert.equal(row.status, 200, row.text);
  assert.deepEqual(row.body.outputs, [{ device_id: 'dev7', seq: 99, temp: 30.5 }]);
  assert.deepEqual(row.body.actions, [{ sink: 'tsdb', type: 'postgres', writes: [{ device_id: 'dev7', seq: 99, temp: 30.5 }] }]);
  assert.equal((await query<{ n: string }>(pgUrl, 'SELECT count(*) AS n FROM readings WHERE seq = 99'))[0]!.n, '0', 'Try it writes nothing');
  const notJson = await api.post<TryResult>('/api/try', { rule: 'readings', event: { topic: 'console/dev7/reading', payload: 'not json' } });
  assert.match(notJson.body.error!.message, /invalid_payload/);

  // Dead letters: listed with the filters, shown with the payload, replayed after the fix.
  const list = await api.get<LetterList>('/api/dead-letters?rule=readings&sink=tsdb&reason=rejected');
  assert.equal(list.status, 200, list.text);
  assert.equal(list.body.total, 10);
  assert.equal(list.body.letters.length, 10);
  assert.match(list.body.store, /weir_dead_letter/);
  assert.ok(list.body.letters.every((l) => l.rule === 'readings' && l.sink === 'tsdb' && /plausible/.test(l.error) && l.replayed === undefined));
  assert.equal((await api.get<LetterList>('/api/dead-letters?reason=invalid_payload')).body.total, 0);
  assert.equal((await api.get<LetterList>(`/api/dead-letters?until=${Date.now() - 3_600_000}`)).body.total, 0);
  const first = list.body.letters[0]!;
  const shown = await api.get<LetterDetail>(`/api/dead-letters/${first.id}`);
  assert.equal(shown.status, 200, shown.text);
  const sent = messages.find((m) => m.payload === shown.body.payload_text);
  assert.ok(sent, `the letter's payload is one that was published: ${shown.body.payload_text}`);
  assert.equal(shown.body.topic, sent.topic);
  assert.equal(shown.body.payload_hex, Buffer.from(sent.payload).toString('hex'));
  assert.equal((await api.get('/api/dead-letters/999999999')).status, 404);

  await query(pgUrl, 'ALTER TABLE readings DROP CONSTRAINT plausible');
  const ids = list.body.letters.map((l) => l.id);
  const replayed = await api.post<LetterActionResult>('/api/dead-letters/replay', { ids });
  assert.equal(replayed.status, 200, replayed.text);
  assert.equal(replayed.body.done, 10, replayed.text);
  assert.equal(replayed.body.failed, 0);
  assert.deepEqual(
    replayed.body.detail.map((x) => x.outcome),
    ids.map(() => 'stored'),
  );
  const rows = await query<{ device_id: string; seq: string; temp: number }>(pgUrl, 'SELECT device_id, seq, temp FROM readings ORDER BY seq');
  assert.equal(rows.length, N, 'every reading is a row now');
  for (const r of rows) {
    const m = messages[Number(r.seq)]!;
    const p = JSON.parse(m.payload) as { temp: number };
    assert.equal(r.device_id, m.topic.split('/')[1], `row ${r.seq}: device from the topic`);
    assert.equal(r.temp, p.temp, `row ${r.seq}: temp from the payload`);
  }
  const again = await api.post<LetterActionResult>('/api/dead-letters/replay', { ids });
  assert.equal(again.body.done, 0, 'a replayed letter is not replayed again');
  const marked = await api.get<LetterList>('/api/dead-letters?reason=rejected');
  assert.ok(
    marked.body.letters.every((l) => l.replayed?.startsWith('stored ')),
    marked.text,
  );

  // Trace: the next two messages of the rule, each step in order.
  const started = await api.post<TraceState>('/api/trace', { rule: 'readings', count: 2 });
  assert.equal(started.status, 200, started.text);
  assert.equal(started.body.active, true);
  const traced = [
    { topic: 'console/t1/reading', payload: JSON.stringify({ seq: 1001, temp: 10.5 }) },
    { topic: 'console/t2/reading', payload: JSON.stringify({ seq: 1002, temp: 11.5 }) },
  ];
  await publish(mqttUrl, traced);
  const trace = (await waitFor(
    async () => {
      const t = (await api.get<TraceState>('/api/trace')).body;
      return !t.active && t.messages.length === 2 ? t : undefined;
    },
    20_000,
    'the trace to end',
  )) as TraceState;
  assert.equal(trace.rule, 'readings');
  for (const m of trace.messages) {
    const src = traced.find((x) => x.topic === m.topic)!;
    assert.equal(m.payload, src.payload);
    assert.equal(m.payload_encoding, 'text');
    assert.deepEqual(
      m.steps.map((s) => s.step),
      ['received', 'output', 'rendered', 'stored'],
    );
    const p = JSON.parse(src.payload) as { seq: number; temp: number };
    const expected = { device_id: src.topic.split('/')[1], seq: p.seq, temp: p.temp };
    assert.deepEqual(m.steps[1]!.detail, { matched: true, outputs: [expected] });
    assert.deepEqual(m.steps[2]!.detail, expected);
    assert.equal(m.steps[3]!.sink, 'tsdb');
    for (let i = 1; i < m.steps.length; i++) assert.ok(m.steps[i]!.at >= m.steps[i - 1]!.at);
  }

  // Purge by filter.
  const purged = await api.post<LetterActionResult>('/api/dead-letters/purge', { filter: { rule: 'readings' } });
  assert.equal(purged.status, 200, purged.text);
  assert.equal(purged.body.done, 10);
  assert.equal((await api.get<LetterList>('/api/dead-letters')).body.total, 0);

  // Cross-site requests are refused.
  const noHeader = await api.post('/api/try', { sql, event }, { 'x-weir-console': '' });
  assert.equal(noHeader.status, 403);
  assert.match(noHeader.text, /x-weir-console/);
  const form = await api.post('/api/dead-letters/purge', 'filter=x', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(form.status, 403);
  const foreign = await api.post('/api/dead-letters/purge', { filter: { rule: 'readings' } }, { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403);
  assert.match(foreign.text, /cross-origin/);
  const same = await api.post('/api/try', { sql, event }, { origin: api.base });
  assert.equal(same.status, 200, same.text);

  // Bad requests: a status and a sentence, never a stack trace.
  const cases: Array<[Promise<{ status: number; text: string }>, number, RegExp]> = [
    [api.post('/api/try', '{not json'), 400, /not JSON/],
    [api.post('/api/try', { event }), 400, /either "sql" or "rule"/],
    [api.post('/api/try', { sql, event: { payload: 'x' } }), 400, /event\.topic/],
    [api.post('/api/try', { rule: 'nope', event }), 404, /no running rule 'nope'/],
    [api.post('/api/trace', { rule: 'readings', count: 0 }), 400, /"count"/],
    [api.post('/api/trace', { rule: 'nope', count: 1 }), 404, /no running rule/],
    [api.post('/api/dead-letters/purge', {}), 400, /"ids".*"filter"/],
    [api.post('/api/dead-letters/purge', { filter: {} }), 400, /at least one/],
    [api.get('/api/dead-letters?since=yesterday'), 400, /since is a time/],
    [api.get('/api/dead-letters?limit=0'), 400, /limit/],
    [api.get('/api/try'), 405, /POST only/],
    [api.get('/api/dead-letters/replay'), 405, /POST only/],
    [api.post('/api/rules', {}), 405, /GET only/],
    [api.get('/api/nothing'), 404, /no API endpoint/],
    [api.post('/api/try', { sql: 'x'.repeat(300 * 1024), event }), 413, /larger than 256 KB/],
  ];
  for (const [p, status, text] of cases) {
    const r = await p;
    assert.equal(r.status, status, r.text);
    assert.match((JSON.parse(r.text) as { error: string }).error, text);
    noStack(r.text);
  }
  assert.equal((await fetch(`${api.base}/rules`, { method: 'POST' })).status, 405, 'only /api/ takes POST');
});

test('open to all without credentials: counters yes, payloads and writes no (with the reason); basic auth opens them', { timeout: 120_000 }, async () => {
  const { weir } = await start('weir-console-open', 'http: { host: 0.0.0.0, port: {{HTTP_PORT}} }');
  const api = consoleClient(weir.httpPort);
  const o = await api.get<Overview>('/api/overview');
  assert.equal(o.status, 200, o.text);
  assert.equal(o.body.access.payloads, false);
  assert.equal(o.body.access.writes, false);
  assert.match(o.body.access.reason, /http\.basic_auth/);
  assert.equal((await api.get('/api/rules')).status, 200);
  assert.equal((await api.get('/api/reconcile')).status, 200);
  const refused: Array<Promise<{ status: number; text: string }>> = [
    api.get('/api/dead-letters'),
    api.get('/api/dead-letters/1'),
    api.get('/api/trace'),
    api.post('/api/trace', { rule: 'readings', count: 1 }),
    api.post('/api/try', { sql: 'SELECT 1 FROM "#"', event: { topic: 'a', payload: '{}' } }),
    api.post('/api/dead-letters/replay', { filter: { rule: 'readings' } }),
    api.post('/api/dead-letters/purge', { filter: { rule: 'readings' } }),
  ];
  for (const p of refused) {
    const r = await p;
    assert.equal(r.status, 403, r.text);
    assert.match(r.text, /http\.basic_auth/);
  }

  const auth = { username: 'ops', password: 's3cret' };
  const { weir: locked } = await start(
    'weir-console-auth',
    `http: { host: 0.0.0.0, port: {{HTTP_PORT}}, basic_auth: { username: ${auth.username}, password: ${auth.password} } }`,
  );
  const anonymous = consoleClient(locked.httpPort);
  assert.equal((await anonymous.get('/api/overview')).status, 401);
  assert.equal((await anonymous.post('/api/try', {})).status, 401);
  const wrong = consoleClient(locked.httpPort, { ...auth, password: 'nope' });
  assert.equal((await wrong.get('/api/rules')).status, 401);
  const ops = consoleClient(locked.httpPort, auth);
  const access = (await ops.get<Overview>('/api/overview')).body.access;
  assert.deepEqual(access, { payloads: true, writes: true, reason: '' });
  const tried = await ops.post<TryResult>('/api/try', { sql: 'SELECT payload.a AS a FROM "#"', event: { topic: 'x/y', payload: '{"a": 1}' } });
  assert.equal(tried.status, 200, tried.text);
  assert.deepEqual(tried.body.outputs, [{ a: 1 }]);
  const letters = await ops.get<LetterList>('/api/dead-letters');
  assert.equal(letters.status, 200, letters.text);
});

test("Try it's SQL decodes with weir.yaml's schemas, as the running rules have them after a reload", { timeout: 120_000 }, async () => {
  // Tele v1 names field 2 `note`; v2, written while weir runs, names it `label`. The payload
  // (id = 7, field 2 = "hi") is the same bytes for both.
  const schemaDir = tempDir('console-schemas');
  const proto = join(schemaDir, 'tele.proto');
  writeFileSync(proto, 'syntax = "proto3";\nmessage Tele { int32 id = 1; string note = 2; }\n');
  const { weir } = await start(
    'weir-console-schemas',
    `http: { host: 127.0.0.1, port: {{HTTP_PORT}} }\nschemas:\n  tele: { type: protobuf, file: ${proto}, message_type: Tele }`,
  );
  const api = consoleClient(weir.httpPort);
  const event = { topic: 'bin/dev1', payload: Buffer.from('0807120268 69'.replace(/ /g, ''), 'hex').toString('base64'), payload_encoding: 'base64' };
  const sql = `SELECT schema_decode('tele', payload) AS t FROM "bin/#"`;
  const before = await api.post<TryResult>('/api/try', { sql, event });
  assert.equal(before.status, 200, before.text);
  assert.equal(before.body.error, undefined, before.text);
  assert.deepEqual(before.body.outputs, [{ t: { id: 7, note: 'hi' } }]);

  writeFileSync(proto, 'syntax = "proto3";\nmessage Tele { int32 id = 1; string label = 2; }\n');
  // Schemas are read again with the rules: touching the rule file reloads both.
  const ruleFile = join(weir.dir, 'rules', 'rule.yaml');
  writeFileSync(ruleFile, `${readFileSync(ruleFile, 'utf8')}\n# reload\n`);
  await waitFor(() => weir.log().includes('rules reloaded'), 30_000, 'the rules (and schemas) reloaded');
  const reloaded = await api.post<TryResult>('/api/try', { sql, event });
  assert.equal(reloaded.status, 200, reloaded.text);
  assert.deepEqual(reloaded.body.outputs, [{ t: { id: 7, label: 'hi' } }], 'the reloaded schema, not the one weir started with');
});

test('console.sequence: the Reconcile view shows a gap and the keys silent at their tail, red, from the stored rows', { timeout: 120_000 }, async () => {
  // ts per row (clock_timestamp, not the transaction's now()), so each key has an interval.
  const ddl = READINGS_DDL.replace(', PRIMARY KEY', ', ts timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY');
  const { weir, mqttUrl: url } = await start(
    'weir-console-sequence',
    'http: { host: 127.0.0.1, port: {{HTTP_PORT}} }\nconsole: { sequence: ["readings:device_id:seq:ts"], stale_after: 2, sequence_every_s: 10 }',
    ddl,
  );
  // seqa loses 3; seqb has none missing. 300 ms apart, so each row is its own batch and time.
  const sent: Array<[string, number]> = [
    ['seqa', 1],
    ['seqb', 1],
    ['seqa', 2],
    ['seqb', 2],
    ['seqa', 4],
    ['seqb', 3],
  ];
  for (const [device, seq] of sent) {
    await publish(url, [{ topic: `console/${device}/reading`, payload: JSON.stringify({ seq, temp: 20 + seq }) }]);
    await new Promise((r) => setTimeout(r, 300));
  }
  await waitFor(async () => (await weir.metric('weir_sink_success_total')) >= sent.length, 30_000, 'every reading stored');
  // Silent for more than 2 of their ~0.5 s intervals before the first check runs. A busy machine
  // can store a key's last row late and stretch its interval: the view is then read again (its
  // check runs every 10 s) until the silence has grown past both keys' intervals.
  await new Promise((r) => setTimeout(r, 2_000));
  const api = consoleClient(weir.httpPort);
  let view: Reconcile | undefined;
  await waitFor(
    async () => {
      view = (await api.get<Reconcile>('/api/reconcile')).body;
      return view.sequence?.at !== undefined && view.sequence.checks[0]?.stale?.keys === 2;
    },
    60_000,
    'a sequence check that finds both keys stale',
  );
  const seq = view!.sequence!;
  assert.equal(seq.error, undefined, JSON.stringify(seq));
  assert.equal(seq.checks.length, 1);
  const c = seq.checks[0]!;
  assert.equal(c.spec, 'readings:device_id:seq:ts');
  assert.deepEqual([c.keys, c.rows, c.missing, c.keys_with_gaps, c.duplicates], [2, 6, 1, 1, 0]);
  assert.deepEqual(c.worst, [{ key: 'seqa', missing: 1, first_missing: [[3, 3]] }]);
  assert.equal(c.stale?.after, 2);
  assert.equal(c.stale?.keys, 2, JSON.stringify(c.stale));
  assert.deepEqual(c.stale!.stalest.map((k) => k.key).sort(), ['seqa', 'seqb']);
  for (const k of c.stale!.stalest) assert.ok(k.missing >= 1 && k.silence_s > 2 * k.interval_s, JSON.stringify(k));
  assert.equal(view!.ok, false, 'a gap and stale keys turn the verdict red');
  // The same table through weir reconcile --sequence gives the same gap.
  const cli = await runCli(['reconcile', '-c', join(weir.dir, 'weir.yaml'), '--sequence', 'readings:device_id:seq:ts', '--json']);
  const fromCli = JSON.parse(cli.stdout) as { sequence: Array<{ missing: number; keysWithGaps: number }> };
  assert.deepEqual([fromCli.sequence[0]!.missing, fromCli.sequence[0]!.keysWithGaps], [c.missing, c.keys_with_gaps]);
});
