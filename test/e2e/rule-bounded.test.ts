// No message can freeze weir (issue 28), against real Mosquitto and PostgreSQL: while a steady
// stream of telemetry from other devices is stored, one device sends
//   - the message: `s` is 36 `a`s and a `!`, to a rule WHERE regex_match(payload.s,
//     '^(a+)+$') — RegExp backtracked for minutes on it; RE2 settles it at once as no match;
//   - a message whose FOREACH would run for minutes (100,000 elements, each a regex_replace over
//     10,000 characters): the evaluation budget fails it with rule.limit after about a second,
//     and it is dead-lettered with that reason and counted failed_exception.
// /healthz is polled throughout and must answer each time, every sample of the stream must be
// stored with the values published, and SIGTERM must end the process promptly.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, query, telemetryFiles } from './fixtures.js';

const CLIENT_ID = 'weir-rule-bounded';
let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, CLIENT_ID);
});

const REGEX_RULE = `
id: regex_text
sql: |
  SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.s AS location
  FROM "device/+/text"
  WHERE regex_match(payload.s, '^(a+)+$')
actions:
  - sink: tsdb
    table: telemetry
    columns: { ts: "\${ts}", device_id: "\${device_id}", seq: "\${seq}", location: "\${location}" }
`;

const FOREACH_RULE = `
id: foreach_budget
sql: |
  FOREACH payload.arr AS x
  DO regex_replace(payload.s, 'b', 'c') AS y
  FROM "device/+/batch"
actions:
  - sink: tsdb
    table: telemetry
    columns: { ts: "2024-12-05T10:00:00Z", device_id: "batch", seq: "\${y}" }
`;

/** /healthz polled every 100 ms: the longest answer, and any poll that failed. */
function pollHealthz(port: number): { stop(): Promise<{ polls: number; slowestMs: number; failures: string[] }> } {
  let running = true;
  let polls = 0;
  let slowestMs = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
        if (r.status !== 200) failures.push(`status ${r.status}`);
        await r.arrayBuffer();
      } catch (err) {
        failures.push(String(err));
      }
      polls++;
      slowestMs = Math.max(slowestMs, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { polls, slowestMs, failures };
    },
  };
}

test('the (a+)+$ message and a FOREACH past its budget settle at once while the stream is stored, /healthz answers, SIGTERM ends weir', {
  timeout: 120_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: CLIENT_ID });
  weir = await startWeir({ ...files, rules: { ...files.rules, 'regex.yaml': REGEX_RULE, 'foreach.yaml': FOREACH_RULE } });
  const w = weir;
  await waitFor(() => w.ready(), 20_000, 'weir ready');
  const health = pollHealthz(w.httpPort);

  const pub = await mqtt.connectAsync(mqttUrl, { clientId: `${CLIENT_ID}-pub`, protocolVersion: 5, reconnectPeriod: 0 });
  const published: { device: string; seq: number; ts: number; temp: number }[] = [];
  const ts0 = Date.now();
  let streaming = true;
  const stream = (async () => {
    for (let seq = 0; streaming || seq < 40; seq++) {
      for (const device of ['s1', 's2', 's3']) {
        const sample = { device, seq, ts: ts0 + seq, temp: 20 + seq / 10, hum: 40, location: `hall-${device}` };
        await pub.publishAsync(`device/${device}/telemetry`, JSON.stringify(sample), { qos: 1 });
        published.push({ device, seq, ts: sample.ts, temp: sample.temp });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await waitFor(async () => (await w.metric('weir_rule_passed_total', 'rule="telemetry_to_tsdb"')) >= 15, 20_000, 'the stream flowing');

  // Issue 28's message, and one that matches (so the rule is seen to work).
  const evil = `${'a'.repeat(36)}!`;
  let t0 = performance.now();
  await pub.publishAsync('device/x1/text', JSON.stringify({ ts: ts0, seq: 1, s: evil }), { qos: 1 });
  await waitFor(async () => (await w.metric('weir_rule_failed_no_result_total', 'rule="regex_text"')) >= 1, 10_000, 'the (a+)+$ message evaluated');
  const regexSettledMs = performance.now() - t0;
  await pub.publishAsync('device/x1/text', JSON.stringify({ ts: ts0, seq: 2, s: 'aaaa' }), { qos: 1 });

  // A FOREACH that would run for minutes: dead-lettered with rule.limit after about its budget.
  const batch = JSON.stringify({ arr: Array.from({ length: 100_000 }, (_, i) => i % 10), s: 'ab'.repeat(5_000) });
  t0 = performance.now();
  await pub.publishAsync('device/x2/batch', batch, { qos: 1 });
  await waitFor(async () => (await w.metric('weir_rule_failed_exception_total', 'rule="foreach_budget"')) >= 1, 20_000, 'the FOREACH failed');
  const budgetSettledMs = performance.now() - t0;

  await new Promise((r) => setTimeout(r, 1_000));
  streaming = false;
  await stream;
  await pub.endAsync();
  const n = published.length;
  await waitFor(async () => (await w.metric('weir_rule_passed_total', 'rule="telemetry_to_tsdb"')) >= n, 30_000, `all ${n} samples evaluated`);
  await waitFor(
    async () => Number((await query<{ n: string }>(pgUrl, "SELECT count(*) AS n FROM telemetry WHERE device_id LIKE 's%'"))[0]!.n) >= n,
    30_000,
    `all ${n} samples stored`,
  );
  const { polls, slowestMs, failures } = await health.stop();

  const t1 = performance.now();
  const code = await w.stop();
  const stopMs = performance.now() - t1;
  weir = undefined;
  process.stdout.write(
    `# (a+)+$ message evaluated after ${regexSettledMs.toFixed(0)} ms; FOREACH dead-lettered after ${budgetSettledMs.toFixed(0)} ms; ` +
      `${n} samples stored; /healthz ${polls} polls, slowest ${slowestMs.toFixed(0)} ms; SIGTERM to exit ${stopMs.toFixed(0)} ms\n`,
  );

  // Settled at once (1 s is generous for a shared 2-core VM; RegExp took minutes).
  assert.ok(regexSettledMs < 1_000, `the (a+)+$ message took ${regexSettledMs} ms`);
  assert.ok(budgetSettledMs < 5_000, `the FOREACH took ${budgetSettledMs} ms to fail`);
  // Every sample stored, with what was published.
  const rows = await query<{ device_id: string; seq: string; ts: Date; temp: number; location: string }>(
    pgUrl,
    "SELECT device_id, seq, ts, temp, location FROM telemetry WHERE device_id LIKE 's%' ORDER BY device_id, seq",
  );
  const want = [...published].sort((a, b) => a.device.localeCompare(b.device) || a.seq - b.seq);
  assert.deepEqual(
    rows.map((r) => [r.device_id, Number(r.seq), r.ts.getTime(), r.temp, r.location]),
    want.map((p) => [p.device, p.seq, p.ts, p.temp, `hall-${p.device}`]),
  );
  // The regex rule: no row for the (a+)+$ message, one for the message that matches.
  const text = await query<{ seq: string; location: string }>(pgUrl, "SELECT seq, location FROM telemetry WHERE device_id = 'x1'");
  assert.deepEqual(
    text.map((r) => [Number(r.seq), r.location]),
    [[2, 'aaaa']],
  );
  // The FOREACH message: dead-lettered with rule.limit's reason, nothing stored.
  const letters = await query<{ rule_id: string; reason: string; error: string }>(pgUrl, 'SELECT rule_id, reason, error FROM weir_dead_letter');
  assert.equal(letters.length, 1, JSON.stringify(letters));
  assert.equal(letters[0]!.rule_id, 'foreach_budget');
  assert.equal(letters[0]!.reason, 'rule_exception');
  assert.match(letters[0]!.error, /the evaluation ran past its budget of 1000 ms/);
  assert.equal((await query(pgUrl, "SELECT 1 FROM telemetry WHERE device_id = 'batch'")).length, 0);
  // /healthz answered every poll, the FOREACH's second included; SIGTERM ended weir cleanly.
  assert.deepEqual(failures, []);
  assert.ok(polls >= 10, `${polls} polls`);
  assert.ok(slowestMs < 3_000, `slowest /healthz ${slowestMs} ms`);
  assert.equal(code, 0);
  assert.ok(stopMs < 10_000, `SIGTERM to exit: ${stopMs} ms`);
});
