// Where items go that can never be stored: a sink that keeps dead letters itself (PostgreSQL: the
// weir_dead_letter table), or a JSON-lines file that is fsynced before the messages are acked.
// A dead letter is durable before its message is acked, like any other output: put() retries
// until it succeeds, and the broker keeps the message meanwhile.
import { appendFile, open } from 'node:fs/promises';
import type { RetryConfig } from '../config/common-spec.js';
import { errorText } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/names.js';
import { backoffMs, sleep } from '../retry/backoff.js';
import type { OutputRecord, RuleEvent } from '../rules/types.js';
import type { DeadLetter, Sink } from '../sinks/types.js';

/** The dead letter of one message (and the output it produced, when there was one). */
export function letterFor(event: RuleEvent, why: { ruleId: string; sink: string; reason: string; error: string; record?: OutputRecord }): DeadLetter {
  return {
    ...why,
    record: why.record,
    topic: event.topic,
    payload: Buffer.isBuffer(event.payload) ? event.payload : Buffer.from(event.payload),
    receivedAt: event.publish_received_at ?? Date.now(),
  };
}

export type DeadLetterWriter = (letters: DeadLetter[], signal: AbortSignal) => Promise<void>;

export function fileDeadLetterWriter(path: string): DeadLetterWriter {
  return async (letters) => {
    const lines = letters
      .map((l) =>
        JSON.stringify({
          rule_id: l.ruleId,
          sink: l.sink,
          reason: l.reason,
          error: l.error,
          topic: l.topic,
          payload_base64: l.payload.toString('base64'),
          record: l.record,
          received_at: new Date(l.receivedAt).toISOString(),
        }),
      )
      .join('\n');
    await appendFile(path, `${lines}\n`);
    const fh = await open(path, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  };
}

export function sinkDeadLetterWriter(sink: Sink): DeadLetterWriter {
  if (!sink.deadLetter) throw new Error('this sink cannot store dead letters');
  return (letters, signal) => sink.deadLetter!(letters, signal);
}

/** Batches dead letters a little (they come in bursts when a batch is split) and stores them. */
export class DeadLetterQueue {
  private waiting: Array<{ letter: DeadLetter; done: () => void }> = [];
  private scheduled = false;

  constructor(
    private readonly write: DeadLetterWriter,
    private readonly retry: RetryConfig,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
  ) {}

  /** Resolves once the letter is stored durably. */
  put(letter: DeadLetter): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ letter, done: resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, 500);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.write(batch.map((b) => b.letter), this.signal);
          break;
        } catch (err) {
          // Never given up on: dropping a dead letter would lose the message for good.
          this.log.warn({ err: errorText(err), attempt, letters: batch.length }, 'storing dead letters failed; retrying');
          await sleep(backoffMs(this.retry, attempt), this.signal);
          if (this.signal.aborted) return;
        }
      }
      for (const b of batch) {
        this.metrics.deadLetters.labels(b.letter.reason).inc();
        b.done();
      }
    }
    this.scheduled = false;
  }
}
