// No message can stall the stream, against real Mosquitto and PostgreSQL: hostile payloads mixed
// into good traffic through the shipped rule, table and dead-letter table. Every message must end
// as a row, a dead letter (kept byte for byte) or a line of the fallback file, and every good
// message, before and after the hostile ones, must be stored. One message left hanging would keep
// its connection at max_unacked for good, and `acked` would never reach the count published.
// Every stored row is compared, value for value, with the message of its (device, seq): the
// oracle of test/harness/hostile.ts reads the payload alone, so a value the message did not carry
// (weir's event counter as seq, issue 28) fails it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { publishLoad } from '../harness/load/publisher.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { HOSTILE, hostileArbitrary, oversizePayload, RowOracle, TELEMETRY_COLUMNS, type ContentReport, type HostileKind } from '../harness/hostile.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id);
});

const MAX_PAYLOAD = 64 * 1024;
const OVERSIZE: HostileKind = {
  name: 'oversize payload',
  end: 'dead_lettered',
  reason: 'payload_too_large',
  payload: (d, s, t) => oversizePayload(d, s, t, MAX_PAYLOAD),
};

interface Sent {
  kind: HostileKind;
  device: number;
  seq: number;
  bytes: Buffer;
}

interface Accounting {
  sent: Sent[];
  /** How each hostile message ended: 'stored', a dead letter's reason, 'fallback' or 'lost'. */
  ends: string[];
  goodPublished: number;
  goodStored: number;
  rows: number;
  deadLetters: Array<{ topic: string; payload: Buffer; reason: string; record: Record<string, unknown> | null; error: string }>;
  fallback: number;
  /** Every row against its message. */
  content: ContentReport;
  weir: WeirProcess;
}

/** The shipped rule's rows, against the messages. */
const shippedRule = () => new RowOracle('telemetry', TELEMETRY_COLUMNS, { device: 'device_id', seq: 'seq' });

/** Publishes `n` messages, every `every`-th from `kinds` in turn, and accounts for each one. */
async function run(name: string, kinds: readonly HostileKind[], n: number, every: number): Promise<Accounting> {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const clientId = `weir-poison-${name}`;
  sessions.push([mqttUrl, clientId]);
  const weir = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId, maxPayloadBytes: MAX_PAYLOAD }));
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const sent: Sent[] = [];
  const oracle = shippedRule();
  const pub = await publishLoad({
    url: mqttUrl,
    clients: 4,
    devices: 40,
    size: 200,
    qos: 1,
    limit: n,
    clientIdPrefix: `${clientId}-pub`,
    // The publisher's plain sample, made here so that the oracle sees it too.
    payloadFor: (device, seq) => {
      if (seq % every !== 0) {
        const bytes = telemetrySample(String(device), seq, 200);
        oracle.publish(String(device), seq, bytes);
        return bytes;
      }
      const kind = kinds[sent.length % kinds.length]!;
      const bytes = kind.payload(String(device), seq, Date.now());
      sent.push({ kind, device, seq, bytes });
      oracle.publish(String(device), seq, bytes, kind.name);
      return bytes;
    },
  });
  assert.equal(pub.acked, n, 'the broker acked every message');
  // Every message acked by weir, the last ones behind the hostile ones included: nothing stalled.
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= n, 120_000, `weir to ack all ${n} messages`);

  const rows = await query<{ device_id: string; seq: string }>(pgUrl, 'SELECT device_id, seq FROM telemetry');
  const stored = new Set(rows.map((r) => `${r.device_id}/${r.seq}`));
  const deadLetters = await query<Accounting['deadLetters'][number]>(pgUrl, 'SELECT topic, payload, reason, record, error FROM weir_dead_letter');
  const fallbackFile = join(weir.dir, 'weir-dead-letter-fallback.jsonl');
  const fallbackLines = existsSync(fallbackFile)
    ? readFileSync(fallbackFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { topic: string; payload_base64: string })
    : [];
  const hostile = new Set(sent.map((s) => `${s.device}/${s.seq}`));
  const ends = sent.map((s) => {
    const topic = `device/${s.device}/telemetry`;
    if (stored.has(`${s.device}/${s.seq}`)) return 'stored';
    const dl = deadLetters.find((d) => d.topic === topic && d.payload.equals(s.bytes));
    if (dl) return dl.reason;
    if (fallbackLines.some((f) => f.topic === topic && Buffer.from(f.payload_base64, 'base64').equals(s.bytes))) return 'fallback';
    return 'lost';
  });
  const goodStored = [...stored].filter((k) => !hostile.has(k)).length;
  const content = oracle.check(await query(pgUrl, oracle.selectSql()));
  return { sent, ends, goodPublished: n - sent.length, goodStored, rows: rows.length, deadLetters, fallback: fallbackLines.length, content, weir };
}

/** Every row is its message's, and every value of every good row was compared. */
function assertContent(a: Accounting, what: string): void {
  assert.equal(a.content.rows, a.rows, `${what}: every row compared`);
  assert.deepEqual(a.content.mismatches, [], `${what}: every row holds what its message carried (${a.content.wrongRows} rows differ)`);
  assert.ok(a.content.compared >= a.goodPublished * 6, `${what}: every value of every good row compared (${a.content.compared})`);
}

test('every hostile payload is stored or dead-lettered with its reason, byte for byte, and the stream behind it is stored', { timeout: 240_000 }, async () => {
  const kinds = [...HOSTILE, OVERSIZE];
  const a = await run('kinds', kinds, 8_000, 40);
  assert.ok(a.sent.length >= kinds.length * 3, `each kind sent several times (${a.sent.length} hostile messages)`);
  const expected = (k: HostileKind, got: string) =>
    k.end === 'either' ? got !== 'lost' : k.end === 'stored' ? got === 'stored' : got === (k.reason ?? got) && got !== 'stored' && got !== 'lost';
  const wrong = a.sent
    .map((s, i) => ({ kind: s.kind.name, expected: s.kind.reason ?? s.kind.end, got: a.ends[i]! }))
    .filter((w, i) => !expected(a.sent[i]!.kind, w.got));
  assert.deepEqual(wrong, [], 'each kind ends as expected');
  assert.equal(a.goodStored, a.goodPublished, 'every good message is stored, those after the hostile ones too');
  assert.equal(a.rows + a.deadLetters.length + a.fallback, 8_000, 'each message is exactly one row or one dead letter');
  assertContent(a, 'hostile kinds');

  // The message that stalled a replica: its letter shows the refused row, the NUL as visible text.
  const nul = a.deadLetters.find((d) => d.record?.location === 'a\\u0000b');
  assert.ok(nul, 'the NUL-bearing row is in the dead letters, the character escaped in the record');
  assert.equal(nul.reason, 'rejected');
  assert.match(a.deadLetters.find((d) => d.reason === 'invalid_payload' && d.payload.includes(0xff))!.error, /not valid UTF-8/);
  assert.equal(await a.weir.metric('weir_dead_letter_fallback_total'), a.fallback);
  assert.equal(await a.weir.stop(), 0);
});

test('generated hostile payloads (fast-check): every one accounted for, no stall, every good message stored', { timeout: 240_000 }, async () => {
  const seed = Number(process.env.WEIR_FUZZ_SEED ?? Date.now() % 2 ** 31);
  process.stdout.write(`# hostile payload seed ${seed} (WEIR_FUZZ_SEED=${seed} to repeat)\n`);
  const generated = fc.sample(hostileArbitrary(), { numRuns: 400, seed });
  const kinds = generated.map((payload, i): HostileKind => ({ name: `generated ${i}`, end: 'either', payload }));
  const a = await run('generated', kinds, 8_000, 20);
  const lost = a.sent.filter((_, i) => a.ends[i] === 'lost').map((s) => s.bytes.toString('base64'));
  assert.deepEqual(lost, [], `seed ${seed}: no hostile message lost (payloads in base64)`);
  assert.equal(a.goodStored, a.goodPublished, `seed ${seed}: every good message stored`);
  assert.equal(a.rows + a.deadLetters.length + a.fallback, 8_000, `seed ${seed}: each message is one row or one dead letter`);
  assertContent(a, `seed ${seed}`);
  const ends: Record<string, number> = {};
  for (const e of a.ends) ends[e] = (ends[e] ?? 0) + 1;
  process.stdout.write(`# generated hostile payloads: ${JSON.stringify(ends)}\n`);
  assert.equal(await a.weir.stop(), 0);
});
