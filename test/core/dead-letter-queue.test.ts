// The dead-letter queue's bookkeeping with an in-memory stand-in store (FakeLetterStore: it tests
// the core's handling of a store's errors, not a real store; the PostgreSQL dead-letter table is
// exercised against the real server in test/e2e/poison.test.ts). Outages are retried until the
// store is back; a letter the store refuses for good is isolated, stored reduced, and as the last
// resort written to the fallback file: every put() resolves, so no message waits forever.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { DeadLetterQueue } from '../../src/core/path/dead-letter-queue.js';
import { letterLine, type DeadLetter, type DeadLetterStore } from '../../src/dead-letters/letter.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics/names.js';
import type { ErrorClass } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';

class Refusal extends Error {}
class Outage extends Error {}

/** Stores letters in memory; `refuse` says which it refuses for good; `outages` writes fail first as outages. */
class FakeLetterStore implements DeadLetterStore {
  readonly stored: DeadLetter[] = [];
  writes = 0;
  constructor(
    private readonly refuse: (l: DeadLetter) => boolean,
    private outages = 0,
  ) {}
  async write(letters: DeadLetter[]): Promise<void> {
    this.writes++;
    if (this.outages > 0) {
      this.outages--;
      throw new Outage('connection refused');
    }
    if (letters.some(this.refuse)) throw new Refusal('unsupported Unicode escape sequence');
    this.stored.push(...letters);
  }
  classify(err: unknown): ErrorClass {
    return err instanceof Outage ? 'retry' : 'reject';
  }
}

const letter = (n: number, record: Record<string, unknown> = { n }): DeadLetter => ({
  ruleId: 'r1',
  sink: 'tsdb',
  reason: 'rejected',
  error: `row ${n} refused`,
  topic: `device/${n}/telemetry`,
  payload: Buffer.from([0x7b, 0x00, 0xff, n]),
  record,
  receivedAt: 1_733_140_000_000 + n,
});

async function putAll(store: DeadLetterStore, letters: DeadLetter[]) {
  const dir = tempDir('dlq');
  const fallback = join(dir, 'fallback.jsonl');
  const metrics = createMetrics();
  const stop = new AbortController();
  try {
    const dlq = new DeadLetterQueue(store, { initial_ms: 1, max_ms: 5, multiplier: 2, max_attempts: 0 }, metrics, silentLogger, stop.signal, fallback);
    await Promise.all(letters.map((l) => dlq.put(l)));
    const lines = existsSync(fallback)
      ? readFileSync(fallback, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
    const count = async (name: string) =>
      (await metrics.registry.getSingleMetricAsString(name))
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .reduce((a, l) => a + Number(l.split(' ').pop()), 0);
    return {
      lines,
      reduced: await count('weir_dead_letter_reduced_total'),
      fallback: await count('weir_dead_letter_fallback_total'),
      total: await count('weir_dead_letter_total'),
    };
  } finally {
    stop.abort();
    rmSync(dir, { recursive: true, force: true });
  }
}

it('an outage of the store is retried until it is back; nothing is reduced or sent to the fallback', async () => {
  const store = new FakeLetterStore(() => false, 3);
  const r = await putAll(store, [letter(1), letter(2)]);
  assert.equal(store.stored.length, 2);
  assert.ok(store.writes >= 4, 'three failed writes, then the one that stored');
  assert.deepEqual([r.reduced, r.fallback, r.total, r.lines.length], [0, 0, 2, 0]);
});

it('a letter the store refuses is isolated and stored reduced: payload exact, record as JSON text, the refusal noted', async () => {
  const bad = letter(7, { note: 'a\u0000b' });
  // Refuses a NUL character in a record's values, as jsonb refuses the \u0000 escape.
  const store = new FakeLetterStore((l) => Object.values(l.record ?? {}).some((v) => typeof v === 'string' && v.includes('\u0000')));
  const letters = [letter(1), letter(2), bad, letter(4), letter(5)];
  const r = await putAll(store, letters);
  assert.equal(store.stored.length, 5, 'every letter stored, the four good ones untouched');
  for (const n of [1, 2, 4, 5]) assert.deepEqual(store.stored.find((l) => l.topic === `device/${n}/telemetry`)!.record, { n });
  const reduced = store.stored.find((l) => l.topic === 'device/7/telemetry')!;
  assert.deepEqual(reduced.payload, bad.payload, 'the payload is kept byte for byte');
  assert.deepEqual(reduced.record, { record_json: JSON.stringify({ note: 'a\u0000b' }) });
  assert.match(reduced.error, /^row 7 refused \(the dead-letter store refused the letter: unsupported Unicode escape sequence; record kept as JSON text\)$/);
  assert.deepEqual([r.reduced, r.fallback, r.total, r.lines.length], [1, 0, 5, 0]);
});

it('a letter refused even in reduced form goes to the fallback file, fsynced and counted; the rest are stored', async () => {
  const store = new FakeLetterStore((l) => l.topic === 'device/3/telemetry');
  const r = await putAll(store, [letter(1), letter(3), letter(4)]);
  assert.deepEqual(store.stored.map((l) => l.topic).sort(), ['device/1/telemetry', 'device/4/telemetry']);
  assert.deepEqual([r.reduced, r.fallback, r.total], [1, 1, 3]);
  assert.equal(r.lines.length, 1);
  const line = r.lines[0]!;
  assert.equal(line.topic, 'device/3/telemetry');
  assert.deepEqual(Buffer.from(line.payload_base64 as string, 'base64'), letter(3).payload);
  assert.match(line.error as string, /refused the letter/);
});

it('a JSON line never fails on what a letter holds: a record that cannot be printed is left out, and said so', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const line = JSON.parse(letterLine(letter(9, circular))) as Record<string, unknown>;
  assert.equal(line.record, undefined);
  assert.match(line.error as string, /^row 9 refused \(record left out: .*circular/i);
  assert.equal(line.payload_base64, letter(9).payload.toString('base64'));
});
