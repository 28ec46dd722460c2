// The INSERT of dead letters into the dead-letter table, shared by the sink (letters of the live
// path) and by `weir dlq replay` (letters a replay wrote, which also name the letter they come
// from). One statement for any number of letters: one array parameter per column.
import type pg from 'pg';
import type { DeadLetter, ReplayOrigin } from '../../dead-letters/letter.js';
import { quoteTable } from '../../sql/quote.js';

export async function insertDeadLetters(db: pg.Pool | pg.ClientBase, table: string, letters: readonly DeadLetter[], origin?: ReplayOrigin): Promise<void> {
  const params: unknown[] = [
    letters.map((l) => textValue(l.ruleId)),
    letters.map((l) => textValue(l.sink)),
    letters.map((l) => l.reason),
    letters.map((l) => textValue(l.error)),
    letters.map((l) => textValue(l.topic)),
    letters.map((l) => l.payload),
    letters.map((l) => jsonbText(l.record)),
    letters.map((l) => new Date(l.receivedAt)),
  ];
  // With an origin the columns of migrations/004_dead_letter_replay.sql are set too; without one
  // only the first migration's are named, so the live path works on a table without 004.
  const extra = origin ? ', attempts, replay_of' : '';
  const extraValues = origin ? ', $9::int, $10::bigint' : '';
  if (origin) params.push(origin.attempts, origin.replayOf);
  await db.query(
    `INSERT INTO ${quoteTable(table)} (rule_id, sink, reason, error, topic, payload, record, received_at${extra})
     SELECT u.*${extraValues} FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::jsonb[], $8::timestamptz[]) AS u`,
    params,
  );
}

/** A text column cannot hold NUL: shown as `\\0` (the payload column keeps the exact bytes). */
function textValue(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '\\0') : s;
}

/**
 * A record as jsonb input. jsonb refuses two escapes JSON.stringify writes: `\u0000` (NUL) and a
 * lone surrogate (`\ud800`; stringify never escapes a valid pair). Each is turned into literal
 * text (`\\u0000`), so the letter is stored with the character visible instead of being refused.
 * An escape is one only after an odd run of backslashes (`\\u0000` is already literal text).
 * Anything else the store refuses goes to the dead-letter queue's reduced form.
 */
export function jsonbText(v: unknown): string | null {
  if (v === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(v) as string | undefined;
  } catch {
    return null;
  }
  if (text === undefined) return null;
  return text.replace(/(\\+)(u0000|ud[89a-f][0-9a-f]{2})/gi, (m: string, slashes: string, esc: string) => (slashes.length % 2 ? `${slashes}\\${esc}` : m));
}
