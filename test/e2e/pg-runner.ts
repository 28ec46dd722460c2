// The core's SinkRunner (batches, splits a batch to isolate refused rows, dead-letters them) over a
// real PostgresSink, without MQTT: for tests of what the PostgreSQL path does with rows. One batch
// per flush (max_delay_ms is long), a fast retry policy, dead letters into the sink's own table.
import { join } from 'node:path';
import type { SinkConfig } from '../../src/config/types.js';
import { DeadLetterQueue, sinkDeadLetterWriter } from '../../src/core/path/dead-letter-queue.js';
import type { Outcome } from '../../src/core/ingest/ack-path.js';
import { SinkRunner } from '../../src/core/path/sink-runner.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, ruleCounters, type Metrics } from '../../src/metrics/names.js';
import { PostgresSink } from '../../src/sinks/postgres/sink.js';
import type { PostgresConfig } from '../../src/sinks/postgres/spec.js';
import type { Sink } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';

export interface PgRunner {
  readonly runner: SinkRunner;
  readonly metrics: Metrics;
  /** Enqueues every row for `action` (topic `t/<row.id or index>`), flushes, and resolves with each row's outcome in order (30 s at most). */
  store(ruleId: string, action: Record<string, unknown>, rows: ReadonlyArray<Record<string, unknown>>): Promise<Array<Outcome | undefined>>;
  close(): Promise<void>;
}

export async function startPgRunner(url: string, o: { insertMode: 'unnest' | 'values'; instance: string }): Promise<PgRunner> {
  const stop = new AbortController();
  const metrics = createMetrics();
  const retry = { initial_ms: 50, max_ms: 200, multiplier: 2, max_attempts: 0 };
  const settings: PostgresConfig = {
    url,
    pool_size: 2,
    insert_mode: o.insertMode,
    statement_timeout_ms: 10_000,
    connect_timeout_ms: 2_000,
    dead_letter_table: 'weir_dead_letter',
    ledger: 'on',
    application_name: `weir-${o.instance}-test`,
  };
  const cfg = { name: 'tsdb', batch: { max_items: 100, max_bytes: 1 << 20, max_delay_ms: 60_000 }, retry, max_in_flight: 1, settings } as unknown as SinkConfig;
  const sink = new PostgresSink(settings, { name: 'tsdb', log: silentLogger, instance: o.instance });
  const dlq = new DeadLetterQueue(
    sinkDeadLetterWriter(sink as unknown as Sink),
    retry,
    metrics,
    silentLogger,
    stop.signal,
    join(tempDir(o.instance), 'fallback.jsonl'),
  );
  const runner = new SinkRunner(cfg, sink as unknown as Sink, dlq, metrics, silentLogger, stop.signal);
  await runner.connect();
  return {
    runner,
    metrics,
    async store(ruleId, action, rows) {
      const handle = runner.bind(ruleId, action, ruleCounters(metrics, ruleId));
      const outcomes: Array<Outcome | undefined> = rows.map(() => undefined);
      let done = 0;
      for (const [i, row] of rows.entries()) {
        runner.enqueue(handle, row, { topic: `t/${String(row.id ?? i)}`, payload: JSON.stringify(row) }, 10, {
          itemDone: (out) => {
            outcomes[i] = out;
            done++;
          },
        });
      }
      await runner.flush();
      const deadline = Date.now() + 30_000;
      while (done < rows.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return outcomes;
    },
    async close() {
      stop.abort();
      await runner.close();
    },
  };
}
