// What `weir dlq` needs of wherever dead letters are kept: read them by filter, mark a replayed
// one with how it ended (together with the letters its replay wrote), delete them. Two stores
// implement it: the PostgreSQL table (src/sinks/postgres/letter-store.ts, offered by the sink
// type), the JSON-lines file (file-store.ts), and a Kafka or Pulsar sink's dead_letter_topic
// (topic-store.ts, over the topic the sink type offers).
import type { ErrorClass } from '../error-codes.js';
import type { DeadLetter } from './letter.js';

/** How a replayed letter ended. Only `stored` counts as a success. */
export type ReplayOutcome =
  /** Every output of the message was stored. */
  | 'stored'
  /** It failed again: the new letter (its reason and error in the note) was written with the mark. */
  | 'dead_lettered'
  /** The current rules produce nothing for it (their FROM or WHERE leave it out now). */
  | 'no_output';

export interface ReplayMark {
  readonly at: number;
  readonly outcome: ReplayOutcome;
  /** The new reason and error when it was dead-lettered again. */
  readonly note: string | undefined;
}

/** A letter as `weir dlq list` shows it: everything but the payload's bytes. */
export interface LetterSummary {
  /** The table's id (PostgreSQL) or a hash of the line (file). */
  readonly id: string;
  readonly ruleId: string;
  readonly sink: string;
  readonly reason: string;
  readonly error: string;
  readonly topic: string;
  readonly payloadBytes: number;
  readonly receivedAt: number;
  /** When it was written; the file store does not record it. */
  readonly deadLetteredAt: number | undefined;
  /** 1 for a message's first dead letter; a replay that fails again writes attempts + 1. */
  readonly attempts: number;
  /** The letter whose replay wrote this one. */
  readonly replayOf: string | undefined;
  readonly replay: ReplayMark | undefined;
}

export interface StoredLetter extends LetterSummary {
  readonly payload: Buffer;
  /** The rule's output or what the sink was sent, as stored (JSON). */
  readonly record: unknown;
}

export interface LetterFilter {
  /** A letter of several rules (payload_too_large lists every rule that matched) matches each. */
  readonly rule?: string;
  readonly sink?: string;
  readonly reason?: string;
  /** On the time the message was received (epoch ms): since inclusive, until exclusive. */
  readonly since?: number;
  readonly until?: number;
  readonly state?: 'pending' | 'replayed';
  /** Only these letters (the console's selection). */
  readonly ids?: readonly string[];
}

/** Whether a filter selects anything narrower than every letter (purge demands one, or --all). */
export function narrows(f: LetterFilter): boolean {
  return [f.rule, f.sink, f.reason, f.since, f.until, f.state, f.ids].some((v) => v !== undefined);
}

/** The filter as a predicate, for stores that read every letter (the file). */
export function matches(l: LetterSummary, f: LetterFilter): boolean {
  if (f.rule !== undefined && !l.ruleId.split(',').includes(f.rule)) return false;
  if (f.sink !== undefined && l.sink !== f.sink) return false;
  if (f.reason !== undefined && l.reason !== f.reason) return false;
  if (f.since !== undefined && l.receivedAt < f.since) return false;
  if (f.until !== undefined && l.receivedAt >= f.until) return false;
  if (f.state === 'pending' && l.replay) return false;
  if (f.state === 'replayed' && !l.replay) return false;
  if (f.ids !== undefined && !f.ids.includes(l.id)) return false;
  return true;
}

export interface LetterStore {
  /** Where the letters are, for messages: `table weir_dead_letter of sink tsdb`, `file /x.jsonl`. */
  readonly where: string;
  /** Lines or records that are not letters, seen by the last read (a file's torn last line); stores that cannot have them leave it out. */
  readonly unreadable?: number;
  /** The letters matching, oldest first, at most `limit`. */
  list(filter: LetterFilter, limit: number): Promise<LetterSummary[]>;
  count(filter: LetterFilter): Promise<number>;
  get(id: string): Promise<StoredLetter | undefined>;
  /**
   * The letters matching, with payloads, oldest first, a page at a time. Only letters present
   * when the iteration starts: what a replay writes meanwhile is not read again in the same run.
   */
  pages(filter: LetterFilter, size: number): AsyncIterable<StoredLetter[]>;
  /**
   * Marks a replayed letter and writes the letters its replay produced (attempts + 1, replay_of
   * its id) in one step where the store can (PostgreSQL: one transaction), so a letter that fails
   * again is never lost and never marked without its successor. Resolves false when the letter
   * was already marked (by a concurrent replay): nothing was written.
   */
  markReplayed(letter: StoredLetter, mark: ReplayMark, written: readonly DeadLetter[]): Promise<boolean>;
  /** `retry`: the store is unreachable now; else it refuses what it was given for good. */
  classify(err: unknown): ErrorClass;
  /** Deletes the letters matching; resolves with how many went. */
  purge(filter: LetterFilter): Promise<number>;
  /** Held for a whole replay so that two replays never send the same letter twice; throws when another holds it. */
  lockForReplay(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
