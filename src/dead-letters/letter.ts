// A dead letter: one item that could not be delivered, with why; its JSON line (the file store's
// line, the topic store's record value), the interface of where letters are written, and the file
// writer. The floor below the core and the sinks: nothing here imports either.
import { appendFile, open } from 'node:fs/promises';
import type { ErrorClass } from '../error-codes.js';
import { errorText } from '../errors.js';
import type { DeadLetterReason } from '../metrics/names.js';
import type { OutputRecord, RuleEvent } from '../rules/types.js';

/** One item that could not be delivered, with why. Written durably before its message is acked. */
export interface DeadLetter {
  readonly ruleId: string;
  readonly sink: string;
  readonly reason: string;
  readonly error: string;
  readonly topic: string;
  readonly payload: Buffer;
  /** The rule's output; for an item the sink refused after it was encoded, what was sent instead (BoundAction.describe). */
  readonly record: OutputRecord | undefined;
  readonly receivedAt: number;
}

/** Who wrote dead letters when `weir dlq replay` did: the letter replayed, and this attempt's number (its attempts + 1). */
export interface ReplayOrigin {
  readonly replayOf: string;
  readonly attempts: number;
}

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
