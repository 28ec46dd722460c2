// The http (webhook) sink end to end: devices publish to Mosquitto, weir (its own process) sends
// every output in JSON-array batches to a webhook server this test starts, which fails (500),
// hangs past the timeout and throttles (429 + Retry-After) on a schedule, and refuses (400) the
// records of a few messages for good. Every other message is delivered at least once, each
// refused one is dead-lettered with the status and the start of the response body, the secret
// header comes from the environment, and no request arrives while a Retry-After holds.
//   npm test -- test/sinks/http-e2e.int.test.ts
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { TELEMETRY_TO_SINK_SQL, endSessions } from '../e2e/fixtures.js';
import { fileMosquitto } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWebhookServer, type WebhookRequest } from '../harness/webhook-server.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { publishExpected } from './message-sink-e2e.js';

const RULE = 'telemetry_to_webhook';
const mosquitto = fileMosquitto();
const running: WeirProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await mosquitto.stop();
});

/** A message whose record the server refuses for good: 20 of the run's. */
const refused = (r: Record<string, unknown>) => r.seq === 2 && Number(r.device_id) % 50 === 0;

/** The schedule, by request number: a 500, a request left hanging, a 429 with Retry-After: 1. */
function scheduled(req: WebhookRequest) {
  if (req.n % 10 === 3) return { status: 500, body: 'scheduled failure' };
  if (req.n % 10 === 6) return { status: 0, hang: true };
  if (req.n % 25 === 9) return { status: 429, headers: { 'Retry-After': '1' }, body: 'slow down' };
  const bad = req.records.find(refused);
  if (bad) return { status: 400, body: JSON.stringify({ error: `seq ${String(bad.seq)} of ${String(bad.device_id)} refused` }) };
  return { status: 200, body: '{"ok":true}' };
}

test('5,000 messages to a webhook that fails, times out and throttles on a schedule: every one delivered at least once, the refused dead-lettered with their status', {
  timeout: 300_000,
}, async (t) => {
  const url = await mosquitto.url();
  const server = await startWebhookServer(scheduled);
  cleanups.push(() => server.dispose());
  const clientId = `weir-webhook-${process.pid}`;
  cleanups.push(() => endSessions(url, clientId, 2));
  const dir = tempDir('weir-http-e2e');
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const letters = join(dir, 'dead-letters.jsonl');
  const weir = await startWeir(
    {
      config: `
broker:
  url: ${url}
  client_id: ${clientId}
  connections: 2
  share_group: ${clientId}
  max_unacked: 5000
  publisher_clientid: { topic_level: 2 }
sinks:
  webhook:
    type: http
    url: ${server.url}/ingest
    headers: { Authorization: 'Bearer \${WEBHOOK_TOKEN}' }
    timeout_ms: 1000
    batch: { max_items: 200, max_delay_ms: 20 }
    retry: { initial_ms: 100, max_ms: 1000 }
dead_letter: { file: ${letters} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
      rules: {
        [`${RULE}.yaml`]: `
id: ${RULE}
sql: |
  ${TELEMETRY_TO_SINK_SQL}
actions:
  - sink: webhook
    format: json_array
    headers: { X-Rule: ${RULE} }
`,
      },
    },
    { dir, env: { WEBHOOK_TOKEN: 's3cret' } },
  );
  running.push(weir);
  await waitFor(() => weir.ready(), 30_000, 'weir ready');

  const N = 5_000;
  const { pub, expected } = await publishExpected(url, N, 200, `webhook-pub-${process.pid}`);
  assert.equal(pub.acked, N, 'the broker acked every publish');
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 180_000, `${N} messages acked by weir`);

  const want = [...expected.values()].map((text) => JSON.parse(text) as Record<string, unknown>);
  const bad = want.filter(refused);
  assert.equal(bad.length, 20);
  // Each stored record is an expected output, as the rule made it; every good one arrived.
  const stored = new Map<string, number>();
  for (const r of server.stored) {
    const key = `${String(r.device_id)}/${String(r.seq)}`;
    assert.equal(JSON.stringify(r), expected.get(key), `record ${key} as the rule made it`);
    stored.set(key, (stored.get(key) ?? 0) + 1);
  }
  assert.deepEqual(
    want.filter((r) => !refused(r) && !stored.has(`${String(r.device_id)}/${String(r.seq)}`)).map((r) => `${String(r.device_id)}/${String(r.seq)}`),
    [],
    'every message not refused was delivered',
  );
  assert.equal(bad.filter((r) => stored.has(`${String(r.device_id)}/${String(r.seq)}`)).length, 0, 'no refused record was stored');

  // The refused: one dead letter each, naming the status and the server's answer.
  const dead = readFileSync(letters, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { reason: string; error: string; rule_id: string; payload_base64: string });
  assert.equal(dead.length, bad.length);
  for (const d of dead) {
    assert.equal(d.reason, 'rejected');
    assert.equal(d.rule_id, RULE);
    assert.match(d.error, /^POST http:\/\/127\.0\.0\.1:\d+\/ingest: HTTP 400 Bad Request: \{"error":"seq 2 of \d+ refused"\}$/);
  }

  // The schedule happened, and weir honoured what it said.
  const by = (s: number | undefined) => server.requests.filter((r) => r.status === s).length;
  const throttled = server.requests.filter((r) => r.status === 429);
  t.diagnostic(
    `${server.requests.length} requests: ${by(200)} ok, ${by(500)} × 500, ${by(undefined)} left hanging, ${throttled.length} × 429, ${by(400)} × 400; ${server.stored.length - (N - bad.length)} records delivered twice`,
  );
  assert.ok(by(500) > 0 && by(undefined) > 0 && throttled.length > 0 && by(400) > 0);
  for (const r of server.requests) {
    assert.equal(r.headers.authorization, 'Bearer s3cret', 'the secret header, from ${WEBHOOK_TOKEN}');
    assert.equal(r.headers['x-rule'], RULE);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.method, 'POST');
  }
  // Requests sent before a 429's answer reached weir arrive within moments of it; after that,
  // none until its Retry-After (1 s) has passed.
  for (const t429 of throttled) {
    const early = server.requests.filter((r) => r.at > t429.at + 300 && r.at < t429.at + 950);
    assert.deepEqual(
      early.map((r) => r.at - t429.at),
      [],
      `no request within the Retry-After of the 429 of request ${t429.n}`,
    );
  }
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), bad.length);
  assert.equal(await weir.metric('weir_sink_success_total', 'sink="webhook"'), N - bad.length);
  assert.ok((await weir.metric('weir_sink_retried_total')) > 0);
  assert.equal(await weir.metric('weir_ingest_unacked'), 0);
  assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
  running.splice(running.indexOf(weir), 1);
});
