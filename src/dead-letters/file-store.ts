// The JSON-lines dead-letter file (dead_letter.file) read and tended by `weir dlq`.
//
// Replay state lives in a sidecar file, `<file>.replayed`: one JSON line per replayed letter
// ({id, at, outcome, note}), appended and fsynced. Not by rewriting the letters' file, because a
// running weir appends to that file by path at any moment: a rewrite (read, write a copy, rename it
// over) would drop every letter appended between the read and the rename, and nothing tells weir
// to stop. Appending to a file only `weir dlq` writes cannot race with it, and a crash leaves at
// worst a torn last line, which is skipped. A letter's id is a hash of its line, so marks stay
// attached to their letters whatever happens to the lines around them (a purge).
//
// Purge has to rewrite the letters' file; it copies, fsyncs, and renames only if the file has not
// grown since it was read (else it reads again), which leaves a window of microseconds in which an
// append by a running weir could be lost. docs/operations.md says to purge the file store while
// weir is stopped, or to use the PostgreSQL store.
import { createHash } from 'node:crypto';
import { open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { appendSynced, letterLine, type DeadLetter } from './letter.js';
import { WeirError } from '../errors.js';
import { asLetterJson, letterFromJson } from './letter-json.js';
import { matches, type LetterFilter, type LetterStore, type LetterSummary, type ReplayMark, type StoredLetter } from './letter-store.js';

interface MarkLine extends ReplayMark {
  readonly id: string;
}

/** Ids are this many hex digits of the line's SHA-256: short to type, collisions negligible for any file weir writes. */
const ID_LENGTH = 12;

export class FileLetterStore implements LetterStore {
  readonly where: string;
  private readonly marksFile: string;
  /** Lines that are not letters (a torn last line after a crash), seen by the last read. */
  unreadable = 0;

  constructor(private readonly file: string) {
    this.where = `file ${file}`;
    this.marksFile = `${file}.replayed`;
  }

  async list(filter: LetterFilter, limit: number): Promise<LetterSummary[]> {
    return (await this.select(filter)).slice(0, limit);
  }

  async count(filter: LetterFilter): Promise<number> {
    return (await this.select(filter)).length;
  }

  async get(id: string): Promise<StoredLetter | undefined> {
    return (await this.readAll()).find((l) => l.id === id);
  }

  async *pages(filter: LetterFilter, size: number): AsyncIterable<StoredLetter[]> {
    // One read: what the file holds now. Letters a replay appends meanwhile are not in it.
    const letters = await this.select(filter);
    for (let i = 0; i < letters.length; i += size) yield letters.slice(i, i + size);
  }

  async markReplayed(letter: StoredLetter, mark: ReplayMark, written: readonly DeadLetter[]): Promise<boolean> {
    if ((await this.marks()).has(letter.id)) return false;
    // The new letters first: a crash between the two appends leaves the letter unmarked beside
    // its successor, and the next replay sends it again (a duplicate letter, never a lost one).
    const origin = { replayOf: letter.id, attempts: letter.attempts + 1 };
    if (written.length)
      await appendSynced(
        this.file,
        written.map((l) => letterLine(l, origin)),
      );
    await appendSynced(this.marksFile, [JSON.stringify({ id: letter.id, ...mark } satisfies MarkLine)]);
    return true;
  }

  classify() {
    // A file's errors (disk full, I/O) may pass; nothing in a letter makes a file refuse it.
    return 'retry' as const;
  }

  async purge(filter: LetterFilter): Promise<number> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const raw = await readBytes(this.file);
      const text = raw.toString('utf8');
      const marks = await this.marks();
      const kept: string[] = [];
      const gone = new Set<string>();
      for (const line of lines(text)) {
        const letter = parse(line, marks);
        // A line that is not a letter is kept: purge deletes only what a filter selected.
        if (letter && matches(letter, filter)) gone.add(letter.id);
        else kept.push(line);
      }
      if (gone.size === 0) return 0;
      const replaced = await replaceIfUnchanged(this.file, raw.length, kept);
      if (!replaced) continue;
      const marksRaw = await readBytes(this.marksFile);
      if (marksRaw.length === 0) return gone.size;
      const keptMarks = lines(marksRaw.toString('utf8')).filter((l) => !gone.has(markOf(l)?.id ?? ''));
      await replaceIfUnchanged(this.marksFile, marksRaw.length, keptMarks);
      return gone.size;
    }
    throw new WeirError('dlq.file_busy', `${this.file} kept growing while it was purged; stop weir and purge again`);
  }

  async lockForReplay(): Promise<() => Promise<void>> {
    // A lock file with the holder's pid; one whose process is gone (a killed replay) is taken over.
    const lock = `${this.file}.replay-lock`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(lock, String(process.pid), { flag: 'wx' });
        return () => unlink(lock).catch(() => undefined);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const pid = Number(await readFile(lock, 'utf8').catch(() => ''));
        if (pid > 0 && alive(pid)) throw new WeirError('dlq.replay_running', `another weir dlq replay (pid ${pid}) is running on ${this.where} (${lock})`);
        await unlink(lock).catch(() => undefined);
      }
    }
    throw new WeirError('dlq.replay_running', `cannot take the replay lock ${lock}`);
  }

  async close(): Promise<void> {}

  private async select(filter: LetterFilter): Promise<StoredLetter[]> {
    return (await this.readAll()).filter((l) => matches(l, filter));
  }

  private async readAll(): Promise<StoredLetter[]> {
    const marks = await this.marks();
    const out: StoredLetter[] = [];
    const seen = new Set<string>();
    this.unreadable = 0;
    for (const line of lines(await readText(this.file))) {
      const letter = parse(line, marks);
      if (!letter) this.unreadable++;
      // Two identical lines are one letter in every respect, and one id: listed and replayed once.
      else if (!seen.has(letter.id)) {
        seen.add(letter.id);
        out.push(letter);
      }
    }
    return out;
  }

  private async marks(): Promise<Map<string, ReplayMark>> {
    const marks = new Map<string, ReplayMark>();
    for (const line of lines(await readText(this.marksFile))) {
      const m = markOf(line);
      if (m && !marks.has(m.id)) marks.set(m.id, { at: m.at, outcome: m.outcome, note: m.note });
    }
    return marks;
  }
}

export function letterId(line: string): string {
  return createHash('sha256').update(line).digest('hex').slice(0, ID_LENGTH);
}

function parse(line: string, marks: ReadonlyMap<string, ReplayMark>): StoredLetter | undefined {
  const v = asLetterJson(line);
  if (!v) return undefined;
  const id = letterId(line);
  return letterFromJson(id, v, { replay: marks.get(id), deadLetteredAt: undefined });
}

function markOf(line: string): MarkLine | undefined {
  try {
    const m = JSON.parse(line) as MarkLine;
    return typeof m?.id === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

async function readText(path: string): Promise<string> {
  return (await readBytes(path)).toString('utf8');
}

/** A file's bytes; none when it does not exist yet (weir creates it with the first letter). */
async function readBytes(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
}

/** Writes `kept` to a copy, fsyncs it, and renames it over `path` unless `path` changed size since it was read. */
async function replaceIfUnchanged(path: string, sizeRead: number, kept: string[]): Promise<boolean> {
  const tmp = `${path}.purge-${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(kept.length ? `${kept.join('\n')}\n` : '');
    await fh.sync();
  } finally {
    await fh.close();
  }
  const now = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (now !== sizeRead) {
    await unlink(tmp);
    return false;
  }
  await rename(tmp, path);
  // The rename is durable once the directory is.
  const dir = await open(dirname(path), 'r');
  await dir.sync().finally(() => dir.close());
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
