// Two weir processes with one broker.client_id, against a real Mosquitto (Debian's 2.0.11, MQTT
// 5): the broker closes the older connection whenever the other connects. Mosquitto 2.0.11 sends
// no DISCONNECT 0x8E for it (checked: the old connection gets no packet, only the close), so weir
// infers the takeover from the broker ending accepted connections without a reason, twice in a
// row (src/core/ingest/session-takeover.ts). Each process that sees it must log it at error level naming
// the client id and what to change, count it, report it on /readyz, and back off with growing
// waits instead of reconnecting every second.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

interface LogLine {
  level: number;
  msg: string;
  client_id?: string;
  evidence?: string;
  retry_in_ms?: number;
}

function takeoverLines(w: WeirProcess): LogLine[] {
  return w
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.msg.startsWith('session taken over'));
}

test('two processes with one client id: the takeover is logged as an error, counted, shown on /readyz, and the reconnects back off', {
  timeout: 240_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const clientId = 'weir-takeover';
  sessions.push([mqttUrl, clientId]);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: 1 });
  const a = await startWeir(files);
  running.push(a);
  await waitFor(() => a.ready(), 30_000, 'the first weir ready');
  const b = await startWeir(files);
  running.push(b);

  const both = [a, b];
  const counted = async () => {
    const n = await Promise.all(both.map((w) => w.metric('weir_ingest_session_taken_over_total', `connection="${clientId}-0"`).catch(() => 0)));
    return n[0]! + n[1]!;
  };
  await waitFor(async () => (await counted()) >= 1, 60_000, 'a takeover counted by either process');
  const seen = both.find((w) => takeoverLines(w).length > 0)!;
  assert.ok(seen, 'a process logged the takeover');

  // The error line: its level, the client id, what to change, and the wait before trying again.
  const [first] = takeoverLines(seen);
  assert.equal(first!.level, 50, 'logged at error level');
  assert.equal(first!.client_id, `${clientId}-0`);
  assert.match(first!.msg, new RegExp(`client id ${clientId}-0: each weir process needs its own broker\\.client_id \\(docs/operations\\.md`));
  assert.match(first!.evidence ?? '', /closed the connection without a reason|DISCONNECT 0x8E/);
  assert.ok((first!.retry_in_ms ?? 0) >= 1000, `backs off at least a second: ${first!.retry_in_ms}`);

  // /readyz: not ready while the session is taken over, whether connected at this moment or not.
  const readyz = await fetch(`http://127.0.0.1:${seen.httpPort}/readyz`);
  assert.equal(readyz.status, 503);
  const body = (await readyz.json()) as { ready: boolean; broker_reason?: string };
  assert.equal(body.ready, false);
  assert.match(
    body.broker_reason ?? '',
    new RegExp(`session ${clientId}-0 taken over by another client with the same client id .*each weir process needs its own broker\\.client_id`),
  );

  // Back off instead of fighting: over the next 25 s, each process's waits after a takeover grow
  // (1 s, 2 s, 4 s, …), where the old code reconnected both about once a second.
  await new Promise((r) => setTimeout(r, 25_000));
  for (const w of both) {
    const waits = takeoverLines(w).map((l) => l.retry_in_ms!);
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i]! > waits[i - 1]!, `waits grow: ${waits}`);
  }
  const connects = both.map((w) => w.log().match(/"msg":"connected to broker"/g)?.length ?? 0);
  process.stdout.write(
    `# connections ${connects}; waits after a takeover: ${both
      .map((w) =>
        takeoverLines(w)
          .map((l) => l.retry_in_ms)
          .join(' '),
      )
      .join(' | ')}\n`,
  );
  assert.ok(connects[0]! + connects[1]! < 30, `connections of both in ~30 s: ${connects}`);
  assert.equal(a.svc.proc.exitCode, null, 'the first weir still runs');
  assert.equal(b.svc.proc.exitCode, null, 'the second weir still runs');
});
