// A dead letter as JSON, as dead-letters/letter.ts letterLine() writes it: a line of the JSON-lines
// file, or the value of a record in a dead-letter topic. Read back here for both stores.
import type { ReplayMark, StoredLetter } from './letter-store.js';

export interface LetterJson {
  rule_id: string;
  sink: string;
  reason: string;
  error: string;
  topic: string;
  payload_base64: string;
  record?: unknown;
  received_at: string;
  attempts?: number;
  replay_of?: string;
}

/** Parsed JSON that has a letter's shape, or undefined (a torn line, a foreign record). */
export function asLetterJson<T extends LetterJson>(text: string): T | undefined {
  try {
    const v = JSON.parse(text) as T;
    return typeof v === 'object' && v !== null && typeof v.topic === 'string' && typeof v.payload_base64 === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The letter `id` from its JSON, with what its store keeps beside it. */
export function letterFromJson(id: string, v: LetterJson, kept: { replay: ReplayMark | undefined; deadLetteredAt: number | undefined }): StoredLetter {
  const payload = Buffer.from(v.payload_base64, 'base64');
  return {
    id,
    ruleId: String(v.rule_id ?? ''),
    sink: String(v.sink ?? ''),
    reason: String(v.reason ?? ''),
    error: String(v.error ?? ''),
    topic: v.topic,
    payload,
    payloadBytes: payload.length,
    record: v.record,
    receivedAt: Date.parse(v.received_at) || 0,
    deadLetteredAt: kept.deadLetteredAt,
    attempts: v.attempts ?? 1,
    replayOf: v.replay_of,
    replay: kept.replay,
  };
}
