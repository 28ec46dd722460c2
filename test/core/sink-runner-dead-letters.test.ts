// What the core's SinkRunner puts in a dead letter, with an in-memory stand-in sink (named
// FakeRejectingSink: it tests the core's bookkeeping, no sink driver's behaviour). An output that
// fails to encode keeps the rule's record; an item the sink refuses after encoding shows what was
// sent (the action's describe()), since the runner lets go of the record once the item exists.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import type { SinkConfig } from '../../src/config/types.js';
import { DeadLetterQueue } from '../../src/core/path/dead-letter-queue.js';
import { fileDeadLetterWriter } from '../../src/dead-letters/letter.js';
import type { Outcome } from '../../src/core/ingest/ack-path.js';
import { SinkRunner } from '../../src/core/path/sink-runner.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, ruleCounters } from '../../src/metrics/names.js';
import type { BoundAction, Sink, SinkInput, WriteResult } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';

interface Item {
  readonly n: number;
  readonly text: string;
}

/** Refuses every item whose n is odd; an output with `bad` set fails to encode. */
class FakeRejectingSink implements Sink<Record<string, unknown>, Item> {
  constructor(private readonly withDescribe: boolean) {}
  bind(): BoundAction<Item> {
    return {
      encode: ({ record }: SinkInput) => {
        if (record.bad) throw new Error('cannot encode');
        return { n: record.n as number, text: `n=${String(record.n)}` };
      },
      ...(this.withDescribe ? { describe: (item: Item) => ({ sent: item.text }) } : {}),
    };
  }
  async connect(): Promise<void> {}
  async probe(): Promise<void> {}
  classify(): 'reject' {
    return 'reject';
  }
  async write(items: Item[]): Promise<WriteResult> {
    const rejected = items.flatMap((it, index) => (it.n % 2 === 1 ? [{ index, error: new Error(`odd ${it.n}`) }] : []));
    return { rejected, retry: [] };
  }
  async close(): Promise<void> {}
}

async function deadLetters(withDescribe: boolean): Promise<Array<{ reason: string; record?: unknown; error: string }>> {
  const dir = tempDir('sink-runner-dl');
  try {
    const stop = new AbortController();
    const metrics = createMetrics();
    const retry = { initial_ms: 10, max_ms: 10, multiplier: 2, max_attempts: 0 };
    const cfg = { name: 'fake', batch: { max_items: 10, max_bytes: 1 << 20, max_delay_ms: 5 }, retry, max_in_flight: 1, settings: {} } as unknown as SinkConfig;
    const dlq = new DeadLetterQueue(fileDeadLetterWriter(join(dir, 'dead.jsonl')), retry, metrics, silentLogger, stop.signal, join(dir, 'fallback.jsonl'));
    const runner = new SinkRunner(cfg, new FakeRejectingSink(withDescribe) as unknown as Sink, dlq, metrics, silentLogger, stop.signal);
    await runner.connect();
    const handle = runner.bind('r1', {}, ruleCounters(metrics, 'r1'));
    const outcomes: Outcome[] = [];
    const records = [{ n: 0 }, { n: 1 }, { n: 2, bad: true }, { n: 3 }];
    for (const record of records) {
      runner.enqueue(handle, record, { topic: 't', payload: JSON.stringify(record) }, 10, { itemDone: (o) => outcomes.push(o) });
    }
    await runner.flush();
    while (outcomes.length < records.length) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual([...outcomes].sort(), ['dead_lettered', 'dead_lettered', 'dead_lettered', 'stored']);
    stop.abort();
    return readFileSync(join(dir, 'dead.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { reason: string; record?: unknown; error: string });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('a dead letter keeps the record when encoding failed, and shows what was sent when the sink refused the item', async () => {
  const letters = await deadLetters(true);
  const byError = Object.fromEntries(letters.map((l) => [l.error, l]));
  assert.deepEqual(byError['cannot encode'], { ...byError['cannot encode'], reason: 'encode_error', record: { n: 2, bad: true } });
  assert.deepEqual(byError['odd 1']!.record, { sent: 'n=1' });
  assert.deepEqual(byError['odd 3']!.record, { sent: 'n=3' });
  assert.equal(byError['odd 3']!.reason, 'rejected');
});

it('a refused item of an action without describe() has no record in its dead letter', async () => {
  const letters = await deadLetters(false);
  assert.deepEqual(
    letters.filter((l) => l.reason === 'rejected').map((l) => l.record),
    [undefined, undefined],
  );
  assert.deepEqual(letters.find((l) => l.reason === 'encode_error')!.record, { n: 2, bad: true });
});
