// Issue 33, end to end through real Mosquitto into real PostgreSQL with weir run: a Sparkplug B
// edge node's session (NBIRTH, DBIRTH, NDATA/DDATA sending aliases only, a rebirth that renames a
// metric, a restart with a new bdSeq that renames again) stored by a FOREACH rule, one row per
// metric, each under the name its alias had in the edge node's last birth. Then a rule with
// payload_schema over 10,000 malformed and truncated Protobuf payloads beside 1,000 good ones:
// every bad one dead-lettered (reason schema_invalid, the decoder's error, the payload byte for
// byte), every good one stored with its content, all acked, weir healthy throughout.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SchemaRegistry } from '../../src/schemas/registry.js';
import { SparkplugAliases } from '../../src/schemas/sparkplug-aliases.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { publish } from './dlq-cli.js';
import { endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

const dir = tempDir('weir-spb-e2e-');
const { registry } = SchemaRegistry.load({}, dir, new SparkplugAliases());

const SPB_RULE = `id: spb_metrics
payload_format: raw
sql: |
  FOREACH spb_decode(payload) AS p, split(topic, '/') AS t, p.metrics AS m
  DO t[2] AS grp, t[3] AS kind, t[4] AS edge, coalesce(t[5], '') AS device, m.name AS metric,
     str(coalesce(m.double_value, m.float_value, m.long_value, m.int_value, m.boolean_value, m.string_value)) AS value,
     m.timestamp AS ts, p.seq AS seq
  FROM "spBv1.0/+/+/+/#"
actions:
  - sink: tsdb
    table: spb_metrics
    columns: { grp: "\${grp}", kind: "\${kind}", edge: "\${edge}", device: "\${device}", metric: "\${metric}", value: "\${value}", ts: "\${ts}", seq: "\${seq}" }
`;

interface Metric {
  name?: string;
  alias?: number;
  datatype: number;
  double_value?: number;
  long_value?: number;
  int_value?: number;
  boolean_value?: boolean;
  timestamp?: number;
}

/** One message of the session, and the rows it must become: [metric name, value] per metric. */
interface Step {
  topic: string;
  seq: number;
  metrics: Metric[];
  rows: Array<[string, string]>;
}

const N = (kind: string) => `spBv1.0/plant1/${kind}/edge1`;
const D = (kind: string) => `spBv1.0/plant1/${kind}/edge1/motor1`;
const temp = (alias: number, v: number, name?: string): Metric => ({
  ...(name ? { name } : {}),
  alias,
  datatype: 10,
  double_value: v + 0.5,
  timestamp: 1000 + v,
});

const SESSION: Step[] = [
  // Session 1 (bdSeq 0): births name the aliases, data sends aliases only.
  {
    topic: N('NBIRTH'),
    seq: 0,
    metrics: [{ name: 'bdSeq', datatype: 8, long_value: 0 }, temp(1, 20, 'temp'), { name: 'pressure', alias: 2, datatype: 3, int_value: 101 }],
    rows: [
      ['bdSeq', '0'],
      ['temp', '20.5'],
      ['pressure', '101'],
    ],
  },
  {
    topic: D('DBIRTH'),
    seq: 1,
    metrics: [
      { name: 'rpm', alias: 10, datatype: 3, int_value: 0 },
      { name: 'running', alias: 11, datatype: 11, boolean_value: false },
    ],
    rows: [
      ['rpm', '0'],
      ['running', 'false'],
    ],
  },
  {
    topic: N('NDATA'),
    seq: 2,
    metrics: [temp(1, 21), { alias: 2, datatype: 3, int_value: 102 }],
    rows: [
      ['temp', '21.5'],
      ['pressure', '102'],
    ],
  },
  {
    topic: D('DDATA'),
    seq: 3,
    metrics: [
      { alias: 10, datatype: 3, int_value: 1500 },
      { alias: 11, datatype: 11, boolean_value: true },
    ],
    rows: [
      ['rpm', '1500'],
      ['running', 'true'],
    ],
  },
  // A rebirth (Node Control/Rebirth) in the same session: alias 1 is now temp_c.
  {
    topic: N('NBIRTH'),
    seq: 0,
    metrics: [{ name: 'bdSeq', datatype: 8, long_value: 0 }, temp(1, 22, 'temp_c'), { name: 'pressure', alias: 2, datatype: 3, int_value: 103 }],
    rows: [
      ['bdSeq', '0'],
      ['temp_c', '22.5'],
      ['pressure', '103'],
    ],
  },
  { topic: D('DBIRTH'), seq: 1, metrics: [{ name: 'rpm', alias: 10, datatype: 3, int_value: 1500 }], rows: [['rpm', '1500']] },
  { topic: N('NDATA'), seq: 2, metrics: [temp(1, 23)], rows: [['temp_c', '23.5']] },
  { topic: D('DDATA'), seq: 3, metrics: [{ alias: 10, datatype: 3, int_value: 1600 }], rows: [['rpm', '1600']] },
  // The edge node restarts: NDEATH, then a new session with bdSeq 1 where alias 1 is temperature, alias 10 speed.
  { topic: N('NDEATH'), seq: 0, metrics: [{ name: 'bdSeq', datatype: 8, long_value: 0 }], rows: [['bdSeq', '0']] },
  {
    topic: N('NBIRTH'),
    seq: 0,
    metrics: [{ name: 'bdSeq', datatype: 8, long_value: 1 }, temp(1, 24, 'temperature')],
    rows: [
      ['bdSeq', '1'],
      ['temperature', '24.5'],
    ],
  },
  { topic: D('DBIRTH'), seq: 1, metrics: [{ name: 'speed', alias: 10, datatype: 3, int_value: 0 }], rows: [['speed', '0']] },
  { topic: N('NDATA'), seq: 2, metrics: [temp(1, 25)], rows: [['temperature', '25.5']] },
  { topic: D('DDATA'), seq: 3, metrics: [{ alias: 10, datatype: 3, int_value: 1700 }], rows: [['speed', '1700']] },
];

test('a Sparkplug B session through Mosquitto into PostgreSQL: one row per metric, each under its birth name', { timeout: 180_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  await query(pgUrl, 'CREATE TABLE spb_metrics (id bigserial, grp text, kind text, edge text, device text, metric text, value text, ts bigint, seq bigint)');
  const clientId = 'weir-spb-session';
  sessions.push([mqttUrl, clientId]);
  const base = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: 1 });
  const weir = await startWeir({ config: base.config, rules: { 'spb.yaml': SPB_RULE } });
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const messages = SESSION.map((s) => ({ topic: s.topic, payload: registry.spbEncode({ timestamp: 1, seq: s.seq, metrics: s.metrics }) }));
  await publish(mqttUrl, messages);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= messages.length, 30_000, 'weir to ack the session');
  assert.equal(await weir.metric('weir_sparkplug_edge_nodes'), 1, 'one edge node held');
  assert.equal(await weir.stop(), 0);

  const rows = await query<{ kind: string; device: string; metric: string | null; value: string; seq: string }>(
    pgUrl,
    'SELECT kind, device, metric, value, seq::text AS seq FROM spb_metrics ORDER BY id',
  );
  const expected = SESSION.flatMap((s) =>
    s.rows.map(([metric, value]) => ({ kind: s.topic.split('/')[2]!, device: s.topic.split('/')[4] ?? '', metric, value, seq: String(s.seq) })),
  );
  assert.deepEqual(rows, expected, 'every metric stored once, under the name of its last birth');
  assert.deepEqual(await query(pgUrl, 'SELECT reason FROM weir_dead_letter'), [], 'nothing dead-lettered');
});

const TELE_PROTO = join(dir, 'tele.proto');
writeFileSync(TELE_PROTO, 'syntax = "proto3";\nmessage Tele { int32 id = 1; string note = 2; double v = 3; }\n');
const { registry: tele } = SchemaRegistry.load({ tele: { type: 'protobuf', file: TELE_PROTO, message_type: 'Tele' } }, dir, new SparkplugAliases());

/** A deterministic generator (xorshift), so a failure can be replayed. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

/**
 * A payload that no Protobuf decoder may accept, of four kinds: a good message cut inside its
 * length-delimited note; one ending in a varint's continuation byte; a field of wire type 7
 * (none exists) before random bytes; a note whose length runs past the end.
 */
function malformed(i: number, r: (n: number) => number): Buffer {
  const good = tele.encode('tele', { id: i, note: 'n'.repeat(20 + r(60)), v: i / 3 }, undefined);
  switch (i % 4) {
    case 0: {
      // The note alone is [0x12, length, bytes…]: cut it after its tag and length, before its last byte.
      const note = tele.encode('tele', { note: 'n'.repeat(20 + r(60)) }, undefined);
      return Buffer.concat([tele.encode('tele', { id: i }, undefined), note.subarray(0, 2 + r(note.length - 2))]);
    }
    case 1:
      return Buffer.concat([good, Buffer.from([0x08, 0x80 | r(128)])]);
    case 2:
      return Buffer.concat([Buffer.from([0x7f]), Buffer.from(Array.from({ length: r(40) }, () => r(256)))]);
    default:
      return Buffer.concat([Buffer.from([0x08, 0x01, 0x12, 0x40 + r(60)]), Buffer.from('short')]);
  }
}

test('payload_schema: 10,000 malformed and truncated payloads dead-lettered with the reason, 1,000 good ones stored, nothing lost', {
  timeout: 600_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  await query(pgUrl, 'CREATE TABLE tele (id int PRIMARY KEY, note text, v float8)');
  const clientId = 'weir-schema-fuzz';
  sessions.push([mqttUrl, clientId]);
  const rule = `id: tele
payload_schema: tele
sql: SELECT schema_decode('tele', payload) AS t, t.id AS id, t.note AS note, t.v AS v FROM "fz/#"
actions:
  - sink: tsdb
    table: tele
    columns: { id: "\${id}", note: "\${note}", v: "\${v}" }
`;
  const base = telemetryFiles({
    mqttUrl,
    pgUrl,
    clientId,
    connections: 2,
    extra: `schemas:\n  tele: { type: protobuf, file: ${TELE_PROTO}, message_type: Tele }\n`,
  });
  const weir = await startWeir({ config: base.config, rules: { 'tele.yaml': rule } });
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const r = rng(33);
  const bad = Array.from({ length: 10_000 }, (_, i) => ({ topic: `fz/bad/${i}`, payload: malformed(i, r) }));
  const good = Array.from({ length: 1_000 }, (_, i) => ({ id: 100_000 + i, note: `good ${i}`, v: i + 0.5 }));
  const messages = [...bad];
  // The good ones among the bad, every eleventh message.
  for (const [i, g] of good.entries()) messages.splice(i * 11, 0, { topic: `fz/good/${g.id}`, payload: tele.encode('tele', g, undefined) });
  await publish(mqttUrl, messages);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= messages.length, 300_000, `weir to ack all ${messages.length}`);
  assert.equal(await weir.metric('weir_ingest_acked_total'), messages.length, 'each message acked once');
  assert.ok(await weir.ready(), 'weir is still ready');
  assert.equal(await weir.metric('weir_dead_letter_total', 'reason="schema_invalid"'), bad.length, 'counted by reason');
  assert.equal(await weir.metric('weir_rule_failed_exception_total', 'rule="tele"'), bad.length, 'each one a failure of the rule');
  assert.equal(await weir.stop(), 0, 'weir stops cleanly');

  const rows = await query<{ id: number; note: string; v: number }>(pgUrl, 'SELECT id, note, v FROM tele ORDER BY id');
  assert.deepEqual(rows, good, 'every good message stored with its content');
  const letters = await query<{ reason: string; error: string; topic: string; payload: Buffer; rule_id: string }>(
    pgUrl,
    'SELECT reason, error, topic, payload, rule_id FROM weir_dead_letter',
  );
  assert.equal(letters.length, bad.length, 'one letter per malformed payload');
  const byTopic = new Map(bad.map((b) => [b.topic, b.payload]));
  for (const l of letters) {
    assert.equal(l.reason, 'schema_invalid', l.topic);
    assert.equal(l.rule_id, 'tele');
    assert.match(l.error, /^tele: (index out of range|invalid wire type|illegal)/, `${l.topic}: the decoder's error (${l.error})`);
    assert.ok(byTopic.get(l.topic)?.equals(l.payload), `${l.topic}: the payload byte for byte`);
    byTopic.delete(l.topic);
  }
  assert.equal(byTopic.size, 0, 'every malformed payload has its letter');
});
