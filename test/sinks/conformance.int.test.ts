// The sink conformance suite: every registered sink type (src/sinks/all.ts) through the same cases,
// under the core's real SinkRunner (batching, max in flight, backoff, splitting around refused
// items, dead-lettering, readiness, counters), against the real PostgreSQL, Kafka and Pulsar the
// harness starts. What differs per sink is in its adapter (test/sinks/conformance/<type>.ts):
// where a fresh target lives, how to read it back, which record it refuses, a service of its own
// to stop. What is specific to one sink (partition choice, compression, TLS, the ledger) stays in
// its own test files.
//   npm test -- test/sinks/conformance.int.test.ts
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { SinkConfig } from '../../src/config/types.js';
import type { Outcome } from '../../src/core/ingest/ack-path.js';
import { DeadLetterQueue } from '../../src/core/path/dead-letter-queue.js';
import { fileDeadLetterWriter, type DeadLetter } from '../../src/dead-letters/letter.js';
import { SinkRunner, type ActionHandle } from '../../src/core/path/sink-runner.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, ruleCounters } from '../../src/metrics/names.js';
import type { RetryConfig } from '../../src/config/common-spec.js';
import { ALL_SINK_TYPES } from '../../src/sinks/all.js';
import type { SinkType } from '../../src/sinks/types.js';
import { tempDir, waitFor } from '../harness/process.js';
import { goodRecord, type SinkAdapter, type Target } from './conformance/adapter.js';
import { httpAdapter } from './conformance/http.js';
import { kafkaAdapter } from './conformance/kafka.js';
import { mqttAdapter } from './conformance/mqtt.js';
import { postgresAdapter } from './conformance/postgres.js';
import { pulsarAdapter } from './conformance/pulsar.js';

/** One adapter per registered sink type: a type without one fails the suite. */
const ADAPTERS: Readonly<Record<string, SinkAdapter>> = {
  postgres: postgresAdapter,
  kafka: kafkaAdapter,
  pulsar: pulsarAdapter,
  mqtt: mqttAdapter,
  http: httpAdapter,
};

const RULE = 'conformance';
const FAST_RETRY: RetryConfig = { initial_ms: 100, max_ms: 1_000, multiplier: 2, max_attempts: 0 };

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

interface Sent {
  readonly outcome: Outcome;
  readonly letter?: DeadLetter;
}

/** A sink of `type` writing to `target` under a real SinkRunner, with its dead letters in a file. */
async function runnerFor(type: SinkType, target: Target, batch: SinkConfig['batch'], retry = FAST_RETRY) {
  const dir = tempDir(`conformance-${type.type}`);
  const stop = new AbortController();
  const metrics = createMetrics();
  const settings = Value.Default(type.configSchema, structuredClone(target.settings)) as Record<string, unknown>;
  assert.ok(Value.Check(type.configSchema, settings), [...Value.Errors(type.configSchema, settings)].map((e) => `${e.path}: ${e.message}`).join('; '));
  const cfg: SinkConfig = { name: type.type, sinkType: type, batch, retry, max_in_flight: 4, settings };
  const sink = type.create(settings, { name: type.type, log: silentLogger });
  // Each write's size and when it was called, seen from outside the real driver.
  const writes: Array<{ items: number; at: number }> = [];
  const write = sink.write.bind(sink);
  sink.write = (items, signal) => {
    writes.push({ items: items.length, at: performance.now() });
    return write(items, signal);
  };
  const deadFile = join(dir, 'dead-letters.jsonl');
  const dlq = new DeadLetterQueue(fileDeadLetterWriter(deadFile), retry, metrics, silentLogger, stop.signal, join(dir, 'fallback.jsonl'));
  const runner = new SinkRunner(cfg, sink, dlq, metrics, silentLogger, stop.signal);
  await runner.connect();
  const action = Value.Default(type.actionSchema, structuredClone(target.action)) as Record<string, unknown>;
  const handle = runner.bind(RULE, action, ruleCounters(metrics, RULE));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    stop.abort();
    await runner.close();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.push(close);
  return {
    runner,
    handle,
    writes,
    close,
    /** A second rule's action on the same target, bound as the pipeline binds it. */
    bindRule(rule: string): ActionHandle {
      return runner.bind(rule, action, ruleCounters(metrics, rule));
    },
    /** Enqueues the records (for `as`, default the suite's rule) and resolves with how each ended, in their order. */
    send(records: Array<Record<string, unknown>>, as: ActionHandle = handle): Promise<Sent[]> {
      const ended: Sent[] = new Array(records.length);
      let left = records.length;
      return new Promise((resolve) => {
        for (const [i, record] of records.entries()) {
          const payload = JSON.stringify(record);
          runner.enqueue(as, record, { topic: `device/${String(record.dev)}/telemetry`, payload }, payload.length, {
            itemDone: (outcome, letter) => {
              ended[i] = { outcome, letter };
              if (--left === 0) resolve(ended);
            },
          });
        }
      });
    },
    /** A counter of this sink (of one rule's actions with `rule`), as a scrape of /metrics shows it. */
    async counter(name: string, rule?: string): Promise<number> {
      let sum = 0;
      for (const line of (await metrics.registry.metrics()).split('\n')) {
        if (line.startsWith(`${name}{`) && (rule === undefined || line.includes(`rule="${rule}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return sum;
    },
    /** The dead letters as the file store holds them (durable before their item ended). */
    letters(): Array<{ reason: string; error: string; topic: string; payload_base64: string; rule_id: string }> {
      let text = '';
      try {
        text = readFileSync(deadFile, 'utf8');
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
  };
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

for (const type of ALL_SINK_TYPES) {
  describe(`${type.type} sink conformance`, { timeout: 600_000 }, () => {
    const adapter = ADAPTERS[type.type];

    it('has a conformance adapter (test/sinks/conformance/<type>.ts, listed in ADAPTERS)', () => {
      assert.ok(adapter, `no conformance adapter for sink type '${type.type}'`);
    });
    if (!adapter) return;

    it('batching: no write over batch.max_items, a partial batch written after max_delay_ms, every record stored once', async () => {
      const target = await adapter.target();
      const r = await runnerFor(type, target, { max_items: 50, max_bytes: 4 * 1024 * 1024, max_delay_ms: 400 });
      const t0 = performance.now();
      const ended = await r.send(range(0, 120).map(goodRecord));
      assert.deepEqual(
        ended.map((e) => e.outcome),
        range(0, 120).map(() => 'stored'),
      );
      assert.deepEqual(
        r.writes.map((w) => w.items),
        [50, 50, 20],
        'two full batches, then the rest',
      );
      assert.ok(r.writes[1]!.at - t0 < 300, `full batches are written at once (${Math.round(r.writes[1]!.at - t0)} ms)`);
      assert.ok(r.writes[2]!.at - t0 >= 390, `the partial batch waits max_delay_ms (${Math.round(r.writes[2]!.at - t0)} ms)`);
      assert.equal(await r.counter('weir_sink_success_total'), 120);
      const stored = await target.stored(120);
      assert.deepEqual(
        stored.sort((a, b) => a - b),
        range(0, 120),
        'each record stored exactly once',
      );
      await r.close();
    });

    // The rejection run, kept for the dead-letter case below.
    let rejection:
      | { sent: Sent[]; bad: Record<string, unknown>; handle: ActionHandle; letters: ReturnType<Awaited<ReturnType<typeof runnerFor>>['letters']> }
      | undefined;

    it('rejection isolation: one refused record among good ones in a batch, the good stored, the bad dead-lettered with its reason, nothing lost', async () => {
      const target = await adapter.target();
      const r = await runnerFor(type, target, { max_items: 40, max_bytes: 64 * 1024 * 1024, max_delay_ms: 50 });
      const BAD = 17;
      const bad = adapter.rejectable(BAD);
      const records = range(0, 40).map((i) => (i === BAD ? bad : goodRecord(i)));
      const sent = await r.send(records);
      assert.deepEqual(
        sent.map((s, i) => [i, s.outcome]),
        range(0, 40).map((i) => [i, i === BAD ? 'dead_lettered' : 'stored']),
      );
      const letters = r.letters();
      assert.equal(letters.length, 1, 'one dead letter, in the store');
      assert.equal(letters[0]!.reason, 'rejected');
      assert.match(letters[0]!.error, adapter.rejection);
      assert.equal(Buffer.from(letters[0]!.payload_base64, 'base64').toString(), JSON.stringify(bad), 'the original payload');
      assert.equal(await r.counter('weir_sink_success_total'), 39);
      assert.equal(await r.counter('weir_sink_dead_lettered_total'), 1);
      const stored = new Set(await target.stored(39));
      assert.deepEqual(
        range(0, 40).filter((i) => !stored.has(i)),
        [BAD],
        'every good record stored, the refused one not',
      );
      rejection = { sent, bad, handle: r.handle, letters };
      await r.close();
    });

    it("dead letters: a refused item's letter carries what the sink's describe() gives for it, the rule, the sink and the message", () => {
      assert.ok(rejection, 'needs the rejection run above');
      const { sent, bad, handle } = rejection;
      const letter = sent[17]!.letter;
      assert.ok(letter, 'the dead-lettered item was told its letter');
      const event = { topic: `device/${String(bad.dev)}/telemetry`, payload: JSON.stringify(bad) };
      const item = handle.bound.encode({ record: bad, event, ruleId: RULE });
      assert.ok(handle.bound.describe, `the ${type.type} action describes what it sent`);
      assert.deepEqual(letter.record, handle.bound.describe(item));
      assert.equal(letter.ruleId, RULE);
      assert.equal(letter.sink, type.type);
      assert.equal(letter.topic, event.topic);
      assert.equal(letter.payload.toString(), event.payload);
      assert.equal(rejection.letters[0]!.rule_id, RULE);
    });

    it("shared batches: two rules' actions on one target make one batch; a refused item of one dead-letters only it, counted for its rule", async () => {
      const target = await adapter.target();
      const r = await runnerFor(type, target, { max_items: 40, max_bytes: 64 * 1024 * 1024, max_delay_ms: 200 });
      const other = r.bindRule('conformance_b');
      const BAD = 33;
      const bad = adapter.rejectable(BAD);
      const [mine, theirs] = await Promise.all([
        r.send(range(0, 20).map(goodRecord)),
        r.send(
          range(20, 20).map((i) => (i === BAD ? bad : goodRecord(i))),
          other,
        ),
      ]);
      assert.equal(r.writes[0]!.items, 40, "the first write holds both rules' items");
      assert.deepEqual(
        [...mine!, ...theirs!].map((s, i) => [i, s.outcome]),
        range(0, 40).map((i) => [i, i === BAD ? 'dead_lettered' : 'stored']),
      );
      const letters = r.letters();
      assert.deepEqual(
        letters.map((l) => [l.rule_id, l.reason]),
        [['conformance_b', 'rejected']],
      );
      assert.equal(theirs![BAD - 20]!.letter?.ruleId, 'conformance_b');
      assert.equal(await r.counter('weir_sink_success_total', RULE), 20);
      assert.equal(await r.counter('weir_sink_success_total', 'conformance_b'), 19);
      assert.equal(await r.counter('weir_sink_dead_lettered_total', RULE), 0);
      assert.equal(await r.counter('weir_sink_dead_lettered_total', 'conformance_b'), 1);
      const stored = new Set(await target.stored(39));
      assert.deepEqual(
        range(0, 40).filter((i) => !stored.has(i)),
        [BAD],
        'every good record of both rules stored, the refused one not',
      );
      await r.close();
    });

    it('retry through an outage: the service stopped with writes pending, then started: all stored, retries counted, readiness down and up, nothing dead-lettered', async () => {
      const { service, target } = await adapter.ownService();
      cleanups.push(() => service.dispose());
      const r = await runnerFor(type, target, { max_items: 50, max_bytes: 4 * 1024 * 1024, max_delay_ms: 20 });
      const before = await r.send(range(0, 100).map(goodRecord));
      assert.ok(before.every((s) => s.outcome === 'stored'));
      await service.stop();
      const during = r.send(range(100, 100).map(goodRecord));
      await waitFor(
        async () => {
          await r.runner.probe();
          return !r.runner.ready && (await r.counter('weir_sink_retried_total')) > 0;
        },
        60_000,
        'not ready, and retrying',
      );
      await service.start();
      const after = await during;
      assert.deepEqual(
        after.map((s) => s.outcome),
        range(0, 100).map(() => 'stored'),
        'every record written during the outage is stored',
      );
      await r.runner.probe();
      assert.equal(r.runner.ready, true, 'ready again');
      assert.ok((await r.counter('weir_sink_retried_total')) > 0, 'retries counted');
      assert.equal(await r.counter('weir_sink_dead_lettered_total'), 0, 'an outage dead-letters nothing');
      assert.deepEqual(r.letters(), []);
      const stored = new Set(await target.stored(200));
      assert.deepEqual(
        range(0, 200).filter((i) => !stored.has(i)),
        [],
        'nothing lost (duplicates are allowed: at least once)',
      );
      await r.close();
    });
  });
}
