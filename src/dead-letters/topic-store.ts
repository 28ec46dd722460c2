// Dead letters kept in a broker topic (a Kafka or Pulsar sink's dead_letter_topic), for setups
// without PostgreSQL. Everything but reading and writing the topic is here, once for both brokers;
// src/sinks/kafka/ and src/sinks/pulsar/ each supply a LetterTopic.
//
// The topic is a keyed log, read as a table (what Kafka's and Pulsar's compaction keep):
//   - a letter is a record whose key is its id and whose value is the letter as JSON;
//   - a replay mark is a newer record with the same key: the whole letter again plus `replay`, so
//     compaction, which keeps only the newest record per key, keeps the letter with its mark;
//   - purge writes a tombstone (a null value) per letter;
//   - reading folds the records from the earliest to the end as of the read, newest per key.
// Records with one key stay in order (one partition), which is all the fold needs.
//
// Replay: the letters a replay produced (a message that failed again) are appended in the same
// send as the mark and before it, so a mark is never without its successor. Their ids are derived
// from the replayed letter's id (and their index), so a replay cut short after the send and run
// again writes the same keys again, not a second copy.
//
// The replay lock: a broker topic has no lock, so the lock is a record of the topic itself (key
// LOCK_KEY, the holder and the time). A replay appends its request, reads the topic to its end, and
// walks the lock records in the order the broker wrote them: a request takes the lock when nobody
// holds it, or the holder's last record is older than LOCK_TTL_MS; the holder renews it every
// LOCK_RENEW_MS and releases it with a record at the end. So of two replays started together the
// one whose request the broker wrote first runs and the other stops with `dlq.replay_running`. Its
// limits: a replay killed without releasing holds the lock for up to LOCK_TTL_MS; a holder stalled
// longer than that (a process paused) can be overtaken; and compaction may leave only the newest
// request, which then looks held until it expires.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { letterLine, type DeadLetter, type ReplayOrigin } from './letter.js';
import { WeirError } from '../errors.js';
import type { ErrorClass } from '../error-codes.js';
import { asLetterJson, letterFromJson, type LetterJson } from './letter-json.js';
import { matches, type LetterFilter, type LetterStore, type LetterSummary, type ReplayMark, type StoredLetter } from './letter-store.js';

/** One record of a dead-letter topic; a null value is a tombstone (the key is deleted). */
export interface TopicRecord {
  readonly key: string;
  readonly value: Buffer | null;
}

/** What a broker offers the store: appending records durably, and reading them all back. */
export interface LetterTopic {
  /** `topic weir-dead-letters of sink events`. */
  readonly where: string;
  /** Appends in order; resolves once the broker has acknowledged every record. */
  append(records: readonly TopicRecord[]): Promise<void>;
  /** Every record from the earliest to the end as of the call; records with one key in the order written. */
  readAll(): Promise<TopicRecord[]>;
  classify(err: unknown): ErrorClass;
  close(): Promise<void>;
}

/** A record's value: the letter as dead-letters/letter.ts letterLine() writes it, plus its time and mark. */
interface LetterValue extends LetterJson {
  dead_lettered_at: string;
  replay?: ReplayMark;
}

interface LockValue {
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  readonly at: number;
  readonly released?: boolean;
}

/** The lock's key; letter ids are hex and never start with an underscore. */
export const LOCK_KEY = '__weir_replay_lock';
export const LOCK_TTL_MS = 60_000;
const LOCK_RENEW_MS = 15_000;
const ID_LENGTH = 12;

/**
 * The records of dead letters as a running sink writes them. The id is a hash of the value, so
 * the same letter written twice (a retried send) is one key; a letter of `weir dlq replay`
 * (`origin`) gets an id derived from the letter it came from instead.
 */
export function letterRecords(letters: readonly DeadLetter[], origin?: ReplayOrigin, at = Date.now()): TopicRecord[] {
  return letters.map((l, i) => {
    const value = JSON.stringify({ ...(JSON.parse(letterLine(l, origin)) as object), dead_lettered_at: new Date(at).toISOString() });
    const key = origin ? hash(`${origin.replayOf}/${origin.attempts}/${i}`) : hash(value);
    return { key, value: Buffer.from(value) };
  });
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, ID_LENGTH);
}

interface Entry {
  readonly value: LetterValue;
  readonly letter: StoredLetter;
}

export class TopicLetterStore implements LetterStore {
  readonly where: string;
  /** The letters as of the last read, updated by this store's own writes. */
  private entries = new Map<string, Entry>();
  /** Records whose value is not a letter, seen by the last read. */
  unreadable = 0;

  constructor(private readonly topic: LetterTopic) {
    this.where = topic.where;
  }

  async list(filter: LetterFilter, limit: number): Promise<LetterSummary[]> {
    return (await this.select(filter)).slice(0, limit);
  }

  async count(filter: LetterFilter): Promise<number> {
    return (await this.select(filter)).length;
  }

  async get(id: string): Promise<StoredLetter | undefined> {
    await this.read();
    return this.entries.get(id)?.letter;
  }

  async *pages(filter: LetterFilter, size: number): AsyncIterable<StoredLetter[]> {
    // One read: the topic as it is now. What the replay appends meanwhile is not read again.
    const letters = await this.select(filter);
    for (let i = 0; i < letters.length; i += size) yield letters.slice(i, i + size);
  }

  async markReplayed(letter: StoredLetter, mark: ReplayMark, written: readonly DeadLetter[]): Promise<boolean> {
    if (!this.entries.has(letter.id)) await this.read();
    const entry = this.entries.get(letter.id);
    if (!entry || entry.value.replay) return false;
    const value: LetterValue = { ...entry.value, replay: mark };
    const successors = letterRecords(written, { replayOf: letter.id, attempts: letter.attempts + 1 });
    // The successors first, in the same append: the mark is never written without them.
    await this.topic.append([...successors, { key: letter.id, value: Buffer.from(JSON.stringify(value)) }]);
    this.entries.set(letter.id, { value, letter: { ...entry.letter, replay: mark } });
    return true;
  }

  classify(err: unknown): ErrorClass {
    return this.topic.classify(err);
  }

  async purge(filter: LetterFilter): Promise<number> {
    const gone = await this.select(filter);
    if (gone.length) await this.topic.append(gone.map((l) => ({ key: l.id, value: null })));
    for (const l of gone) this.entries.delete(l.id);
    return gone.length;
  }

  async lockForReplay(): Promise<() => Promise<void>> {
    const me: Omit<LockValue, 'at'> = { holder: randomUUID(), host: hostname(), pid: process.pid };
    const request = (extra: Partial<LockValue> = {}): TopicRecord => ({
      key: LOCK_KEY,
      value: Buffer.from(JSON.stringify({ ...me, at: Date.now(), ...extra })),
    });
    await this.topic.append([request()]);
    const holder = lockHolder(await this.topic.readAll());
    if (holder?.holder !== me.holder) {
      await this.topic.append([request({ released: true })]).catch(() => undefined);
      const who = holder ? `${holder.host} pid ${holder.pid}, since ${new Date(holder.at).toISOString()}` : 'unknown';
      throw new WeirError(
        'dlq.replay_running',
        `another weir dlq replay (${who}) holds the replay lock of ${this.where}; a lock not renewed for ${LOCK_TTL_MS / 1000} s expires`,
      );
    }
    const renew = setInterval(() => void this.topic.append([request()]).catch(() => undefined), LOCK_RENEW_MS);
    renew.unref();
    return async () => {
      clearInterval(renew);
      await this.topic.append([request({ released: true })]).catch(() => undefined);
    };
  }

  close(): Promise<void> {
    return this.topic.close();
  }

  private async select(filter: LetterFilter): Promise<StoredLetter[]> {
    await this.read();
    return [...this.entries.values()].map((e) => e.letter).filter((l) => matches(l, filter));
  }

  private async read(): Promise<void> {
    const folded = foldLetters(await this.topic.readAll());
    this.entries = folded.entries;
    this.unreadable = folded.unreadable;
  }
}

/** The newest record per key, tombstones deleting, in the order each key was first written. */
function foldLetters(records: readonly TopicRecord[]): { entries: Map<string, Entry>; unreadable: number } {
  const entries = new Map<string, Entry>();
  let unreadable = 0;
  for (const r of records) {
    if (r.key === LOCK_KEY) continue;
    if (r.value === null || r.value.length === 0) {
      entries.delete(r.key);
      continue;
    }
    const value = asLetterJson<LetterValue>(r.value.toString('utf8'));
    if (!value) unreadable++;
    else
      entries.set(r.key, {
        value,
        letter: letterFromJson(r.key, value, { replay: value.replay, deadLetteredAt: Date.parse(value.dead_lettered_at) || undefined }),
      });
  }
  return { entries, unreadable };
}

/** Who holds the lock after these records, walking its records in the order the broker wrote them. */
function lockHolder(records: readonly TopicRecord[]): LockValue | undefined {
  let holder: LockValue | undefined;
  for (const r of records) {
    if (r.key !== LOCK_KEY) continue;
    const v = r.value?.length ? (JSON.parse(r.value.toString('utf8')) as LockValue) : undefined;
    if (!v) holder = undefined;
    else if (v.holder === holder?.holder) holder = v.released ? undefined : v;
    else if (!v.released && (!holder || v.at - holder.at > LOCK_TTL_MS)) holder = v;
  }
  // A holder silent for the TTL has let go, though no later request says so yet.
  return holder && Date.now() - holder.at <= LOCK_TTL_MS ? holder : undefined;
}
