// Dead letters in the console (GET /api/dead-letters[/<id>], POST …/replay and …/purge), through
// the same store and replay as `weir dlq` (dead-letter-store.ts, dead-letter-replay.ts): list and
// show read it, replay sends letters back through the running rules' current definitions with
// sinks of its own (as `weir dlq replay` does, and under the same replay lock), purge deletes.
// The store is opened on first use and kept until the runtime stops.
import type { Logger } from '../../../log.js';
import type { LetterFilter, LetterStore, LetterSummary } from '../../../dead-letters/letter-store.js';
import { errorText } from '../../../errors.js';
import { redactUrl } from '../../../log.js';
import { replay } from '../dead-letter-replay.js';
import { openLetterStore } from '../dead-letter-store.js';
import type { LetterActionResult, LetterDetail, LetterList, LetterSummaryView } from './api.js';
import type { ConsoleDeps } from './deps.js';
import { numberField, objectField, RequestError, stringField } from './request-error.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
/** Letters one request may select by id. */
const MAX_IDS = 1000;
const REPLAY_RATE = 200;

export class ConsoleLetters {
  private store: LetterStore | undefined;
  private busy = false;

  constructor(
    private readonly d: ConsoleDeps,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
    /** Told of each letter a replay stored. */
    private readonly stored: (letter: LetterSummary) => void = () => undefined,
  ) {}

  async list(query: URLSearchParams): Promise<LetterList> {
    const filter = filterOfQuery(query);
    const limit = query.has('limit') ? Number(query.get('limit')) : DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new RequestError(400, `limit is a whole number from 1 to ${MAX_LIMIT}`);
    const store = this.open();
    if (!store) return { letters: [], total: 0, store: 'none yet' };
    const [letters, total] = await Promise.all([store.list(filter, limit), store.count(filter)]);
    return { letters: letters.map(summaryView), total, store: store.where };
  }

  async show(id: string): Promise<LetterDetail> {
    const letter = await this.open()?.get(id);
    if (!letter) throw new RequestError(404, `no dead letter with id '${id}'`);
    let text: string | undefined;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(letter.payload);
    } catch {
      text = undefined;
    }
    return { ...summaryView(letter), payload_text: text, payload_hex: letter.payload.toString('hex'), record: letter.record };
  }

  async replay(body: unknown): Promise<LetterActionResult> {
    const filter = actionFilter(body);
    const store = this.open();
    if (!store) return { done: 0, failed: 0, detail: [] };
    return this.exclusive(async () => {
      const release = await store.lockForReplay().catch((err: unknown) => {
        throw new RequestError(409, `another replay holds the letters: ${errorText(err)}`);
      });
      try {
        const detail: { id: string; outcome: string }[] = [];
        // The rules as they run now (a reload since the start included).
        const cfg = { ...this.d.cfg, rules: this.d.pipeline.liveRules.map((r) => r.cfg) };
        const s = await replay(cfg, store, {
          filter: { ...filter, state: 'pending' },
          rate: REPLAY_RATE,
          signal: this.signal,
          log: this.log,
          outcome: (l, outcome) => {
            detail.push({ id: l.id, outcome });
            if (outcome === 'stored') this.stored(l);
          },
        });
        return { done: s.stored, failed: s.selected - s.stored, detail };
      } finally {
        await release();
      }
    });
  }

  async purge(body: unknown): Promise<LetterActionResult> {
    const filter = actionFilter(body);
    const store = this.open();
    if (!store) return { done: 0, failed: 0, detail: [] };
    return this.exclusive(async () => {
      const ids = filter.ids ? [...filter.ids] : (await store.list(filter, MAX_LIMIT)).map((l) => l.id);
      const done = await store.purge(filter);
      return { done, failed: 0, detail: ids.map((id) => ({ id, outcome: 'purged' })) };
    });
  }

  async close(): Promise<void> {
    await this.store?.close().catch(() => undefined);
  }

  /** The store, or undefined while there is none (no file written yet). */
  private open(): LetterStore | undefined {
    if (this.store) return this.store;
    try {
      this.store = openLetterStore(this.d.cfg, 'store');
    } catch (err) {
      if ((err as { code?: string }).code === 'dlq.no_store') return undefined;
      throw new Error(redactUrl(errorText(err)));
    }
    return this.store;
  }

  /** One replay or purge at a time from the console. */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy) throw new RequestError(409, 'a replay or purge from the console is running; try again when it is done');
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }
}

function summaryView(l: LetterSummary): LetterSummaryView {
  return {
    id: l.id,
    at: l.receivedAt,
    rule: l.ruleId,
    sink: l.sink,
    reason: l.reason,
    error: l.error,
    topic: l.topic,
    ...(l.replay ? { replayed: `${l.replay.outcome} ${new Date(l.replay.at).toISOString()}` } : {}),
  };
}

function filterOfQuery(q: URLSearchParams): LetterFilter {
  const time = (key: string) => {
    const v = q.get(key);
    if (v === null || v === '') return undefined;
    const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(n)) throw new RequestError(400, `${key} is a time: epoch milliseconds or ISO 8601, not '${v}'`);
    return n;
  };
  const text = (key: string) => q.get(key) || undefined;
  return { rule: text('rule'), sink: text('sink'), reason: text('reason'), since: time('since'), until: time('until') };
}

/** A LetterAction body as a filter: ids, or a filter with at least one field (never everything by accident). */
function actionFilter(body: unknown): LetterFilter {
  const o = objectField(body, 'the request');
  if (o.ids !== undefined) {
    if (!Array.isArray(o.ids) || o.ids.length === 0 || o.ids.length > MAX_IDS || !o.ids.every((x) => typeof x === 'string'))
      throw new RequestError(400, `"ids" is a list of 1 to ${MAX_IDS} letter ids`);
    if (o.filter !== undefined) throw new RequestError(400, 'give "ids" or "filter", not both');
    return { ids: o.ids as string[] };
  }
  if (o.filter === undefined) throw new RequestError(400, 'give "ids" (the letters) or "filter" (rule, sink, reason, since, until)');
  const f = objectField(o.filter, '"filter"');
  const filter: LetterFilter = {
    rule: stringField(f, 'rule', 'filter.rule'),
    sink: stringField(f, 'sink', 'filter.sink'),
    reason: stringField(f, 'reason', 'filter.reason'),
    since: numberField(f, 'since', 'filter.since'),
    until: numberField(f, 'until', 'filter.until'),
  };
  if (Object.values(filter).every((v) => v === undefined)) throw new RequestError(400, '"filter" needs at least one of rule, sink, reason, since, until');
  return filter;
}
