// What a scenario published, and where each message ended: the accounting behind every figure of
// the fault suite. Every message has a unique (device, seq). The ledger keeps the ones the broker
// acknowledged (a PUBACK: mqtt.js keeps an unacknowledged QoS 1 publish and sends it again after
// a reconnect, so a message whose connection dropped counts only once it is acked), then finds
// each in the telemetry table, in weir_dead_letter or weir's dead-letter fallback file, or
// nowhere: lost. Lost is a set difference, so it is never negative.
//
// A dead letter keeps the original payload. A plain sample names its seq in the payload's first
// bytes (`{"device":"7","seq":12,…`); a hostile payload may carry none (empty, truncated, a seq too
// big for bigint), so the ledger also keeps the md5 of each payload a scenario supplied itself,
// by device, and matches those dead letters by their bytes.
//
// With a RowOracle the ledger also keeps what each message should become, from the payload the
// scenario supplied (every message's, then), so a scenario can compare the rows' contents too.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { query } from '../e2e/fixtures.js';
import type { RowOracle } from '../harness/hostile.js';

export const idOf = (device: number | string, seq: number | string): string => `${device}/${seq}`;

/**
 * A payload a scenario supplies instead of the publisher's plain sample, and what it is (the
 * hostile family's name; none for good traffic the scenario supplies so that its oracle sees it).
 */
export interface CustomPayload {
  payload: Buffer;
  kind?: string;
}

/** The table whose rows are the stored messages, and its (device, seq) columns. */
export interface StoredTable {
  readonly name: string;
  readonly device: string;
  readonly seq: string;
}

export const TELEMETRY: StoredTable = { name: 'telemetry', device: 'device_id', seq: 'seq' };

/** Where the messages ended, at the time of `Ledger.account()`. */
export interface Accounting {
  /** Acknowledged by the broker. */
  published: number;
  /** Distinct (device, seq) in the stored table (telemetry unless the scenario has its own). */
  stored: number;
  rows: number;
  /** Rows in weir_dead_letter, plus lines in the fallback files. */
  deadLettered: number;
  fallback: number;
  /** Published, neither stored nor dead-lettered. */
  lost: number;
  /** Telemetry rows beyond one per (device_id, seq). */
  duplicates: number;
  /** Rows or dead letters that belong to no message the broker acknowledged (expected: none). */
  strays: number;
  /** Dead letters of a message already dead-lettered or stored (a redelivery dead-lettered again). */
  repeatedDeadLetters: number;
  storedIds: ReadonlySet<string>;
  /** Dead-lettered message → the dead letter's reason. */
  deadReasons: ReadonlyMap<string, string>;
  /** A few lost ids, for the report. */
  lostSample: string[];
}

/** A query's rows, or none while weir has not created the table yet (42P01: undefined table). */
async function rowsOf<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  try {
    return await query<T>(url, sql);
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return [];
    throw err;
  }
}

const SEQ_IN_PAYLOAD = /"seq":([0-9]{1,15})[,}]/;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

export class Ledger {
  readonly acked = new Set<string>();
  /** Order in which the broker acknowledged each message (0 = first). */
  readonly ackOrder = new Map<string, number>();
  /** Messages whose payload the scenario supplied, by id: their kind. */
  readonly kinds = new Map<string, string>();
  /** `${device}|${md5}` → ids with that payload, in publish order. */
  private readonly byPayload = new Map<string, string[]>();

  /** `oracle`: told every payload the scenario supplies. */
  constructor(readonly oracle?: RowOracle) {}

  /** For publishLoad's onAcked. */
  readonly onAcked = (device: number, seq: number): void => {
    const id = idOf(device, seq);
    if (this.acked.has(id)) return;
    this.ackOrder.set(id, this.acked.size);
    this.acked.add(id);
  };

  /** Wraps a scenario's payload hook for publishLoad's payloadFor, keeping what it supplied. */
  payloadFor(custom: (device: number, seq: number) => CustomPayload | undefined): (device: number, seq: number) => Buffer | undefined {
    return (device, seq) => {
      const c = custom(device, seq);
      if (!c) return undefined;
      this.oracle?.publish(String(device), seq, c.payload, c.kind);
      if (c.kind === undefined) return c.payload;
      const id = idOf(device, seq);
      this.kinds.set(id, c.kind);
      const key = `${device}|${md5(c.payload)}`;
      const ids = this.byPayload.get(key);
      if (ids) ids.push(id);
      else this.byPayload.set(key, [id]);
      return c.payload;
    };
  }

  /** Reads the database (and weir's fallback files) and accounts for every acknowledged message. */
  async account(pgUrl: string, fallbackFiles: string[] = [], table: StoredTable = TELEMETRY): Promise<Accounting> {
    const storedIds = new Set<string>();
    let rows = 0;
    let strays = 0;
    const stored = await rowsOf<{ device_id: string; seq: string; n: number }>(
      pgUrl,
      `SELECT "${table.device}" AS device_id, "${table.seq}"::text AS seq, count(*)::int AS n FROM "${table.name}" GROUP BY 1, 2`,
    );
    for (const r of stored) {
      const id = idOf(r.device_id, r.seq);
      rows += r.n;
      storedIds.add(id);
      if (!this.acked.has(id)) strays++;
    }

    // One line per distinct dead letter: the device from the topic, the payload's md5 and the seq
    // it names, if any (encode(…, 'escape') keeps ASCII as it is).
    type Letters = Array<{ device: string; reason: string; h: string; seq: string | null; n: number }>;
    const letters: Letters = await rowsOf<Letters[number]>(
      pgUrl,
      `SELECT split_part(topic, '/', 2) AS device, reason, md5(payload) AS h,
              substring(encode(substring(payload from 1 for 160), 'escape') from '${SEQ_IN_PAYLOAD.source}') AS seq, count(*)::int AS n
         FROM weir_dead_letter GROUP BY 1, 2, 3, 4`,
    );
    let fallback = 0;
    for (const file of fallbackFiles) {
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const l = JSON.parse(line) as { topic: string; reason: string; payload_base64: string };
        const payload = Buffer.from(l.payload_base64, 'base64');
        fallback++;
        letters.push({
          device: l.topic.split('/')[1] ?? '',
          reason: l.reason,
          h: md5(payload),
          seq: SEQ_IN_PAYLOAD.exec(payload.subarray(0, 160).toString('latin1'))?.[1] ?? null,
          n: 1,
        });
      }
    }

    const deadReasons = new Map<string, string>();
    let deadLettered = 0;
    let repeatedDeadLetters = 0;
    const taken = new Map<string, number>();
    for (const l of letters) {
      deadLettered += l.n;
      const key = `${l.device}|${l.h}`;
      const same = this.byPayload.get(key);
      for (let i = 0; i < l.n; i++) {
        let id: string | undefined;
        if (same) {
          const next = taken.get(key) ?? 0;
          id = same[next];
          if (id !== undefined) taken.set(key, next + 1);
          else id = same[0]; // more letters than messages with these bytes: a repeat
        } else if (l.seq !== null) {
          id = idOf(l.device, l.seq);
        }
        if (id === undefined || !this.acked.has(id)) strays++;
        else if (deadReasons.has(id) || storedIds.has(id)) repeatedDeadLetters++;
        else deadReasons.set(id, l.reason);
      }
    }

    const lostSample: string[] = [];
    let lost = 0;
    for (const id of this.acked) {
      if (storedIds.has(id) || deadReasons.has(id)) continue;
      lost++;
      if (lostSample.length < 10) lostSample.push(id);
    }
    return {
      published: this.acked.size,
      stored: storedIds.size,
      rows,
      deadLettered,
      fallback,
      lost,
      duplicates: rows - storedIds.size,
      strays,
      repeatedDeadLetters,
      storedIds,
      deadReasons,
      lostSample,
    };
  }
}
