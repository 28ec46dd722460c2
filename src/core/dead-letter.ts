// Where items go that can never be stored: a sink that keeps dead letters itself (PostgreSQL: the
// weir_dead_letter table), or a JSON-lines file that is fsynced before the messages are acked.
// A dead letter is durable before its message is acked, like any other output.
//
// No dead letter may hold up the messages behind it (acks are released in arrival order, so one
// letter retried forever stalls its connection for good: a JSON `\u0000` escape refused by jsonb
// did exactly that). So the store's errors are told apart, as the sinks' are:
//   - an outage (the store's classify says `retry`) is retried until the store is back: the
//     broker keeps the messages meanwhile;
//   - a refusal (`reject`, `fatal`: a value the store will never take, a missing table) is
//     isolated to the letters it concerns by splitting the batch; each refused letter is stored
//     again in a reduced form (the payload exactly as received, the record as JSON text, the
//     refusal noted in `error`), and if even that is refused it is appended to a local fallback
//     file, fsynced, counted (weir_dead_letter_fallback_total) and logged at error level.
import { appendFile, open } from 'node:fs/promises';
import type { RetryConfig } from '../config/common-spec.js';
import { errorText } from '../errors.js';
import type { Logger } from '../log.js';
import type { DeadLetterReason, Metrics } from '../metrics/names.js';
import { backoffMs, sleep } from '../retry/backoff.js';
import type { OutputRecord, RuleEvent } from '../rules/types.js';
import type { DeadLetter, ErrorClass, ReplayOrigin, Sink } from '../sinks/types.js';

/** The dead letter of one message (and the output it produced, when there was one). */
export function letterFor(event: RuleEvent, why: { ruleId: string; sink: string; reason: DeadLetterReason; error: string; record?: OutputRecord }): DeadLetter {
  return {
    ...why,
    record: why.record,
    topic: event.topic,
    payload: Buffer.isBuffer(event.payload) ? event.payload : Buffer.from(event.payload),
    receivedAt: event.publish_received_at ?? Date.now(),
  };
}

/** Where dead letters are stored, and which of its errors are outages. */
export interface DeadLetterStore {
  write(letters: DeadLetter[], signal: AbortSignal): Promise<void>;
  /** `retry`: the store is unreachable, write the same letters later; else it refuses them for good. */
  classify(err: unknown): ErrorClass;
}

/**
 * One JSON line per letter; never throws on what a letter holds (a record too deep to print is
 * left out, and said so). A letter written by `weir dlq replay` also names the letter it came from.
 */
export function letterLine(l: DeadLetter, origin?: ReplayOrigin): string {
  let record: unknown = l.record;
  let note: string | undefined;
  try {
    JSON.stringify(record);
  } catch (err) {
    record = undefined;
    note = `record left out: ${errorText(err)}`;
  }
  return JSON.stringify({
    rule_id: l.ruleId,
    sink: l.sink,
    reason: l.reason,
    error: note ? `${l.error} (${note})` : l.error,
    topic: l.topic,
    payload_base64: l.payload.toString('base64'),
    record,
    received_at: new Date(l.receivedAt).toISOString(),
    ...(origin ? { attempts: origin.attempts, replay_of: origin.replayOf } : {}),
  });
}

/** Appends lines to a file and fsyncs it before resolving. */
export async function appendSynced(path: string, lines: string[]): Promise<void> {
  await appendFile(path, `${lines.join('\n')}\n`);
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A JSON-lines file. Every error of a file is treated as an outage (disk full, I/O error): retried. */
export function fileDeadLetterWriter(path: string): DeadLetterStore {
  return {
    write: (letters) =>
      appendSynced(
        path,
        letters.map((l) => letterLine(l)),
      ),
    classify: () => 'retry',
  };
}

export function sinkDeadLetterWriter(sink: Sink): DeadLetterStore {
  if (!sink.deadLetter) throw new Error('this sink cannot store dead letters');
  return {
    write: (letters, signal) => sink.deadLetter!(letters, signal),
    // A programming error in the driver (a value it cannot serialise) will not change on a retry.
    classify: (err) => (err instanceof TypeError || err instanceof RangeError ? 'reject' : sink.classify(err)),
  };
}

/**
 * The letter again with only what any store can hold: the payload (bytes, kept exactly), the
 * record as JSON text (or left out when it cannot be printed), and the refusal in `error`.
 */
export function reducedLetter(l: DeadLetter, refusal: unknown): DeadLetter {
  let text: string | undefined;
  try {
    text = JSON.stringify(l.record);
  } catch {
    text = undefined;
  }
  const kept = text === undefined ? 'record left out' : 'record kept as JSON text';
  return {
    ...l,
    record: text === undefined ? undefined : { record_json: text },
    error: `${l.error} (the dead-letter store refused the letter: ${errorText(refusal)}; ${kept})`,
  };
}

interface Waiting {
  letter: DeadLetter;
  /** Set once the letter was refused and is being stored in its reduced form. */
  reduced: boolean;
  done: () => void;
}

/** Batches dead letters a little (they come in bursts when a batch is split) and stores them. */
export class DeadLetterQueue {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly store: DeadLetterStore,
    private readonly retry: RetryConfig,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
    /** The last resort for a letter the store refuses even in its reduced form (JSON lines, fsynced). */
    private readonly fallbackFile: string,
  ) {}

  /** Resolves once the letter is stored durably. */
  put(letter: DeadLetter): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ letter, reduced: false, done: resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      await this.storeBatch(this.waiting.splice(0, 500));
      if (this.signal.aborted) break;
    }
    this.scheduled = false;
  }

  /** Stores a batch: retries outages, isolates refusals; every letter ends stored (or weir stops). */
  private async storeBatch(batch: Waiting[]): Promise<void> {
    for (let attempt = 1; !this.signal.aborted; attempt++) {
      try {
        await this.store.write(
          batch.map((b) => b.letter),
          this.signal,
        );
        for (const b of batch) this.stored(b);
        return;
      } catch (err) {
        if (this.store.classify(err) === 'retry') {
          this.log.warn({ err: errorText(err), attempt, letters: batch.length }, 'storing dead letters failed; retrying');
          await sleep(backoffMs(this.retry, attempt), this.signal);
          continue;
        }
        if (batch.length > 1) {
          const mid = batch.length >> 1;
          await this.storeBatch(batch.slice(0, mid));
          await this.storeBatch(batch.slice(mid));
          return;
        }
        return this.refused(batch[0]!, err);
      }
    }
  }

  /** One letter the store refused for good: its reduced form, then the fallback file. */
  private async refused(w: Waiting, err: unknown): Promise<void> {
    if (!w.reduced) {
      this.log.warn({ err: errorText(err), reason: w.letter.reason, topic: w.letter.topic }, 'dead-letter store refused a letter; storing it in reduced form');
      this.metrics.deadLetterReduced.inc();
      return this.storeBatch([{ ...w, letter: reducedLetter(w.letter, err), reduced: true }]);
    }
    for (let attempt = 1; !this.signal.aborted; attempt++) {
      try {
        await appendSynced(this.fallbackFile, [letterLine(w.letter)]);
        this.metrics.deadLetterFallback.inc();
        this.log.error(
          { err: errorText(err), reason: w.letter.reason, topic: w.letter.topic, file: this.fallbackFile },
          'dead-letter store refused a letter even in reduced form; written to the fallback file',
        );
        this.stored(w);
        return;
      } catch (fileErr) {
        this.log.error({ err: errorText(fileErr), attempt, file: this.fallbackFile }, 'writing the dead-letter fallback file failed; retrying');
        await sleep(backoffMs(this.retry, attempt), this.signal);
      }
    }
  }

  private stored(w: Waiting): void {
    this.metrics.deadLetters.labels(w.letter.reason).inc();
    w.done();
  }
}
