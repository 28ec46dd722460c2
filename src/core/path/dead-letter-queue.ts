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
import type { RetryConfig } from '../../config/common-spec.js';
import { appendSynced, letterLine, reducedLetter, type DeadLetter, type DeadLetterStore } from '../../dead-letters/letter.js';
import { errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics/names.js';
import { backoffMs, sleep } from '../../retry/backoff.js';
import type { Sink } from '../../sinks/types.js';

/** A sink that keeps dead letters itself (PostgreSQL's weir_dead_letter table) as the store. */
export function sinkDeadLetterWriter(sink: Sink): DeadLetterStore {
  if (!sink.deadLetter) throw new Error('this sink cannot store dead letters');
  return {
    write: (letters, signal) => sink.deadLetter!(letters, signal),
    // A programming error in the driver (a value it cannot serialise) will not change on a retry.
    classify: (err) => (err instanceof TypeError || err instanceof RangeError ? 'reject' : sink.classify(err)),
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
