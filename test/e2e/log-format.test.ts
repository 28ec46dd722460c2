// log_format (issue 29, item 11): `weir run` with `pretty` writes readable lines for a terminal
// (time, level, message, key=value fields), with `json` (the default) one JSON object per line.
// A weir process against the harness's Mosquitto and PostgreSQL; prettyLine's own cases below.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { prettyLine } from '../../src/log-pretty.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const ended: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of ended) await endSessions(url, id);
});

/** weir's log lines once it has started with this log_format, and stopped. */
async function runWith(format: 'json' | 'pretty', clientId: string): Promise<string[]> {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  ended.push([mqttUrl, clientId]);
  const w = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId, extra: `log_format: ${format}` }));
  running.push(w);
  // /healthz answers from before the migrations (migrate_on_start); the lines tested come once
  // weir has started, so stop only then.
  // "weir started" comes once the sessions are opening, not connected: wait for both lines tested
  // (a busy machine once stopped weir between the two).
  await waitFor(() => w.log().includes('weir started') && w.log().includes('connected to broker'), 60_000, 'weir to start and connect');
  assert.equal(await w.stop(), 0);
  running.splice(running.indexOf(w), 1);
  return w.log().split('\n').filter(Boolean);
}

test('log_format: pretty writes one readable line per entry: time, level, message, key=value fields', { timeout: 120_000 }, async () => {
  const lines = await runWith('pretty', 'weir-log-pretty');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('{')),
    [],
    'no JSON line',
  );
  const started = lines.find((l) => l.includes('weir started'));
  assert.match(started ?? lines.join('\n'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}weir started {2}http_port=\d+ rules=1 sinks=1$/);
  const connected = lines.find((l) => l.includes('connected to broker'));
  assert.match(connected ?? lines.join('\n'), /INFO {2}connected to broker {2}client_id=weir-log-pretty-[01] session_present=(true|false)$/);
  assert.ok(
    lines.some((l) => / INFO {2}stopped$/.test(l)),
    'the last line too',
  );
});

test('log_format: json (the default) writes one JSON object per line', { timeout: 120_000 }, async () => {
  const lines = await runWith('json', 'weir-log-json');
  const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string; app: string; http_port?: number });
  const started = parsed.find((o) => o.msg === 'weir started');
  assert.equal(started?.level, 30);
  assert.equal(started?.app, 'weir');
  assert.equal(typeof started?.http_port, 'number');
});

test('prettyLine: quoting, objects, error stacks, colour, and a line that is not JSON', () => {
  const line = (o: Record<string, unknown>) => JSON.stringify({ level: 40, time: '2026-12-05T10:00:00.000Z', app: 'weir', ...o });
  assert.equal(
    prettyLine(line({ msg: 'sink write failed', err: 'connect ECONNREFUSED 127.0.0.1:5432', attempt: 3, filters: ['a/#'], ok: false, none: null, empty: '' })),
    '2026-12-05T10:00:00.000Z WARN  sink write failed  err="connect ECONNREFUSED 127.0.0.1:5432" attempt=3 filters=["a/#"] ok=false none=null empty=""\n',
  );
  assert.equal(prettyLine(line({ msg: 'two\nlines', detail: 'a\nb', eq: 'k=v' })), '2026-12-05T10:00:00.000Z WARN  two\\nlines  detail="a\\nb" eq="k=v"\n');
  assert.equal(
    prettyLine(line({ level: 50, msg: 'start failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' } })),
    '2026-12-05T10:00:00.000Z ERROR start failed  err=boom\n    Error: boom\n        at x\n',
  );
  assert.equal(prettyLine(line({ level: 30, msg: 'up' }), true), '2026-12-05T10:00:00.000Z \u001b[32mINFO \u001b[0m up\n');
  assert.equal(prettyLine('not json'), 'not json\n');
});
