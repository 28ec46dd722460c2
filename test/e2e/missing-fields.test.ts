// Issue 28, end to end against real Mosquitto and PostgreSQL with weir run through its CLI: a
// field the rule selected but the message lacks renders as NULL, never as a value of weir's own
// (its per-process event counter was stored as `seq`). Seven payloads without `seq` (root arrays,
// root scalars, an empty object, an object with only `temp`) go to a table whose seq is NOT NULL:
// each is dead-lettered with the server's not-null error and kept byte for byte, and no row
// exists for its device. Where seq may be NULL, the same seven are stored with seq NULL. Good
// messages beside them are stored with exactly the values they carried.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { publish } from './dlq-cli.js';
import { endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

/** The issue's rule, as a user writes it: one column per selected field. */
const RULE = `id: fx
sql: |
  SELECT clientid AS device, payload.seq AS seq, payload.temp AS temp, payload.note AS note
  FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: fx_rows
    columns: { device: "\${device}", seq: "\${seq}", temp: "\${temp}", note: "\${note}" }
`;

/** The issue's seven payloads, none with a `seq`, one per device e1…e7. */
const MISSING = ['[1,2,3]', '[5]', '{}', '7', '"s"', '[10,20,30,40,50]', '{"temp":4}'].map((payload, i) => ({
  device: `e${i + 1}`,
  payload: Buffer.from(payload),
}));

interface Row {
  device: string;
  seq: string | null;
  temp: number | null;
  note: string | null;
}

/**
 * Good messages (device g1…g3) and the row each must become. The seq values include 4…10, the
 * numbers weir's event counter had when the issue was filed, so a fabricated row would collide.
 */
const GOOD: Array<{ payload: string; row: Row }> = [
  { payload: '{"seq":4,"temp":21.5,"note":"first"}', row: { device: 'g1', seq: '4', temp: 21.5, note: 'first' } },
  { payload: '{"seq":5,"temp":-0.25}', row: { device: 'g1', seq: '5', temp: -0.25, note: null } },
  { payload: '{"seq":10,"note":"ü ✓ \\"quoted\\""}', row: { device: 'g2', seq: '10', temp: null, note: 'ü ✓ "quoted"' } },
  { payload: '{"seq":0,"temp":0,"note":""}', row: { device: 'g2', seq: '0', temp: 0, note: '' } },
  { payload: '{"seq":9007199254740991,"temp":1e300,"note":"max"}', row: { device: 'g3', seq: '9007199254740991', temp: 1e300, note: 'max' } },
  { payload: '{"note":"n","seq":7,"extra":{"seq":99}}', row: { device: 'g3', seq: '7', temp: null, note: 'n' } },
];

interface Letter {
  rule_id: string;
  sink: string;
  reason: string;
  error: string;
  topic: string;
  payload: Buffer;
  record: Record<string, unknown> | null;
}

/** weir on the issue's rule and the given table, the dead letters in weir_dead_letter; publishes every message and waits for weir to ack them all. */
async function runIssue(name: string, ddl: string) {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  await query(pgUrl, ddl);
  const clientId = `weir-missing-${name}`;
  sessions.push([mqttUrl, clientId]);
  const base = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: 1 });
  const weir = await startWeir({ config: base.config, rules: { 'fx.yaml': RULE } });
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const devices = ['g1', 'g1', 'g2', 'g2', 'g3', 'g3'];
  const messages = [
    ...GOOD.slice(0, 3).map((g, i) => ({ topic: `device/${devices[i]}/telemetry`, payload: g.payload })),
    ...MISSING.map((m) => ({ topic: `device/${m.device}/telemetry`, payload: m.payload })),
    ...GOOD.slice(3).map((g, i) => ({ topic: `device/${devices[i + 3]}/telemetry`, payload: g.payload })),
  ];
  await publish(mqttUrl, messages);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= messages.length, 30_000, `weir to ack all ${messages.length} messages`);
  assert.equal(await weir.metric('weir_ingest_acked_total'), messages.length, 'weir acked each message once');
  assert.equal(await weir.stop(), 0, 'weir stops cleanly');

  const rows = await query<Row>(pgUrl, 'SELECT device, seq::text AS seq, temp, note FROM fx_rows ORDER BY device, seq NULLS FIRST');
  const letters = await query<Letter>(pgUrl, 'SELECT rule_id, sink, reason, error, topic, payload, record FROM weir_dead_letter ORDER BY id');
  return { rows, letters };
}

const byDevice = (a: Row, b: Row) => (a.device === b.device ? Number(a.seq ?? -1) - Number(b.seq ?? -1) : a.device < b.device ? -1 : 1);

test("seven payloads without seq into a NOT NULL seq: each dead-lettered with the server error, byte for byte, and no row of weir's own", {
  timeout: 120_000,
}, async () => {
  const { rows, letters } = await runIssue(
    'notnull',
    'CREATE TABLE fx_rows (device text NOT NULL, seq bigint NOT NULL, temp float8, note text, PRIMARY KEY (device, seq))',
  );

  const fabricated = rows.filter((r) => r.device.startsWith('e'));
  assert.deepEqual(fabricated, [], 'no row for e1…e7: their seq is missing, nothing may stand in for it');
  assert.deepEqual(rows, GOOD.map((g) => g.row).sort(byDevice), 'the good messages are stored with exactly their published values');

  assert.equal(letters.length, MISSING.length, `one dead letter per payload without seq (${letters.map((l) => l.topic).join(', ')})`);
  for (const m of MISSING) {
    const topic = `device/${m.device}/telemetry`;
    const l = letters.find((x) => x.topic === topic);
    assert.ok(l, `${topic} (${m.payload}) is dead-lettered`);
    assert.equal(l.reason, 'rejected', `${topic}: the table refused the row`);
    assert.match(l.error, /null value in column "seq" of relation "fx_rows" violates not-null constraint/, `${topic}: the server's error`);
    assert.equal(l.rule_id, 'fx');
    assert.equal(l.sink, 'tsdb');
    assert.ok(l.payload.equals(m.payload), `${topic}: the original payload byte for byte (got ${JSON.stringify(l.payload.toString())})`);
    assert.ok(l.record, `${topic}: the letter keeps the refused record`);
    assert.equal(l.record.device, m.device, `${topic}: the record's device`);
    assert.equal(l.record.seq ?? null, null, `${topic}: the record's seq is missing, not ${JSON.stringify(l.record.seq)}`);
    assert.equal(l.record.note ?? null, null, `${topic}: the record's note is missing`);
    assert.equal(l.record.temp ?? null, m.payload.toString() === '{"temp":4}' ? 4 : null, `${topic}: the record's temp is the payload's`);
  }
});

test('the same seven into a nullable seq: stored with seq NULL (never a number) and exactly what they carried', { timeout: 120_000 }, async () => {
  const { rows, letters } = await runIssue('nullable', 'CREATE TABLE fx_rows (device text NOT NULL, seq bigint, temp float8, note text, UNIQUE (device, seq))');

  assert.deepEqual(letters, [], 'nothing is dead-lettered');
  const expected: Row[] = [
    ...GOOD.map((g) => g.row),
    ...MISSING.map((m) => ({ device: m.device, seq: null, temp: m.payload.toString() === '{"temp":4}' ? 4 : null, note: null })),
  ];
  assert.deepEqual(
    rows.filter((r) => r.device.startsWith('e')).map((r) => `${r.device}: seq ${r.seq}`),
    MISSING.map((m) => `${m.device}: seq null`),
    'e1…e7 stored once each with seq NULL',
  );
  assert.deepEqual(rows, expected.sort(byDevice), 'every row holds exactly what its message carried, NULL for what it lacked');
});
