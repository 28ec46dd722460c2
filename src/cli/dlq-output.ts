// What `weir dlq` prints: the table of letters, one letter in full, a replay's summary.
import type { LetterSummary, StoredLetter } from '../dead-letters/letter-store.js';
import type { ReplaySummary } from '../core/app/dead-letter-replay.js';
import { columns } from './columns.js';

const SHORT_ERROR = 60;

export function letterTable(letters: readonly LetterSummary[]): string {
  const head = ['id', 'received', 'rule', 'sink', 'reason', 'topic', 'attempts', 'replay', 'error'];
  const rows = letters.map((l) => [
    l.id,
    iso(l.receivedAt),
    l.ruleId,
    l.sink || '-',
    l.reason,
    l.topic,
    String(l.attempts),
    replayState(l),
    oneLine(l.error, SHORT_ERROR),
  ]);
  return columns(head, rows, 'lllllllll');
}

export function replayState(l: LetterSummary): string {
  return l.replay ? `${l.replay.outcome} ${iso(l.replay.at)}` : 'pending';
}

export function summaryJson(l: LetterSummary): Record<string, unknown> {
  return {
    id: l.id,
    received_at: iso(l.receivedAt),
    dead_lettered_at: l.deadLetteredAt === undefined ? undefined : iso(l.deadLetteredAt),
    rule_id: l.ruleId,
    sink: l.sink,
    reason: l.reason,
    topic: l.topic,
    payload_bytes: l.payloadBytes,
    attempts: l.attempts,
    replay_of: l.replayOf,
    replay: l.replay ? { at: iso(l.replay.at), outcome: l.replay.outcome, note: l.replay.note } : undefined,
    error: l.error,
  };
}

/** A payload for reading: its text when it is UTF-8 (escaped if it holds control characters), else base64. */
export function payloadView(payload: Buffer): { encoding: 'utf-8' | 'utf-8, escaped' | 'base64'; text: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(payload);
  } catch {
    return { encoding: 'base64', text: payload.toString('base64') };
  }
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return { encoding: 'utf-8, escaped', text: JSON.stringify(text) };
  return { encoding: 'utf-8', text };
}

export function letterText(l: StoredLetter): string {
  const p = payloadView(l.payload);
  const lines = [
    `id            ${l.id}`,
    `received      ${iso(l.receivedAt)}`,
    ...(l.deadLetteredAt === undefined ? [] : [`dead-lettered ${iso(l.deadLetteredAt)}`]),
    `rule          ${l.ruleId}`,
    `sink          ${l.sink || '- (the rule failed on the message)'}`,
    `reason        ${l.reason}`,
    `topic         ${l.topic}`,
    `attempts      ${l.attempts}${l.replayOf ? ` (written by the replay of letter ${l.replayOf})` : ''}`,
    `replay        ${l.replay ? `${l.replay.outcome} at ${iso(l.replay.at)}${l.replay.note ? `: ${l.replay.note}` : ''}` : 'pending'}`,
    `error         ${l.error}`,
    `record        ${l.record === undefined ? '-' : JSON.stringify(l.record)}`,
    `payload       ${l.payload.length} bytes, ${p.encoding}:`,
    p.text,
  ];
  return `${lines.join('\n')}\n`;
}

export function letterJson(l: StoredLetter): Record<string, unknown> {
  const p = payloadView(l.payload);
  return {
    ...summaryJson(l),
    record: l.record,
    payload_encoding: p.encoding === 'base64' ? 'base64' : 'utf-8',
    payload: p.encoding === 'base64' ? p.text : l.payload.toString('utf8'),
    payload_base64: l.payload.toString('base64'),
  };
}

export function replaySummaryText(s: ReplaySummary): string {
  const out = [
    `replayed ${s.selected} letter${s.selected === 1 ? '' : 's'}: ${s.stored} stored, ${s.deadLettered} dead-lettered again, ${s.noOutput} without output, ${sum(s.skipped)} skipped, ${s.failed} failed`,
  ];
  for (const [reason, n] of s.newReasons) out.push(`  dead-lettered again: ${n} × ${reason}`);
  for (const [why, n] of s.skipped) out.push(`  skipped (left pending): ${n} × ${why}`);
  for (const e of s.errors) out.push(`  failed (left pending): ${e}`);
  return `${out.join('\n')}\n`;
}

function sum(m: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
