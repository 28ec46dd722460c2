// The content oracle's verdict on a round (oracle.test.ts): what each stored row and dead letter
// should be, computed from the message alone — `weir eval`'s outputs (the rule engine), rendered
// by oracle-values.ts, converted to each column's type by PostgreSQL's own input functions (a
// cast in a separate session, not weir's insert) — against what weir stored.
import pg from 'pg';
import { NULL_TWIN } from './oracle-gen.js';
import { evalEvent, keyTemplate, type PlannedRule, readExpr, SENTINEL_ID, SENTINEL_TS, sqlOf, type StoredRound, topicOf } from './oracle-round.js';
import { type ColType, type EventView, isMap, paramText, readJson, renderTemplate, type Template, templateText, type Val } from './oracle-values.js';

/** One message of one rule: the line given to `weir eval`, and its twin with JSON nulls written as NULL_TWIN. */
export function evalLines(tag: string, p: PlannedRule): Array<[string, string]> {
  const sql = sqlOf(tag, p);
  return p.payloads.map((m, j) => [
    JSON.stringify({ sql, rule_id: p.id, event: evalEvent(tag, p.id, j, m.text) }),
    JSON.stringify({ sql, rule_id: p.id, event: evalEvent(tag, p.id, j, m.twin) }),
  ]);
}

const TWIN_VALUE = JSON.parse(NULL_TWIN) as string;

/** `weir eval` prints an absent value as null: where the twin shows NULL_TWIN the value was a JSON null, else absent. */
function merge(a: Val, b: Val): Val {
  if (a === null) return b === TWIN_VALUE ? null : undefined;
  if (Array.isArray(a)) return a.map((x, i) => merge(x, Array.isArray(b) ? b[i] : undefined));
  if (isMap(a)) {
    const out: { [k: string]: Val } = Object.create(null) as { [k: string]: Val };
    for (const k of Object.keys(a)) out[k] = merge(a[k], isMap(b) && Object.hasOwn(b, k) ? b[k] : undefined);
    return out;
  }
  return a;
}

type Outputs = { error: string; reason: 'rule_exception' | 'invalid_payload' } | { records: Array<{ [k: string]: Val }> };

function isJson(text: string): boolean {
  try {
    readJson(text);
    return true;
  } catch {
    return false;
  }
}

function outputsOf(line: string, twinLine: string): Outputs {
  const a = readJson(line);
  const b = readJson(twinLine);
  if (!isMap(a) || !isMap(b)) throw new Error(`weir eval: ${line}`);
  if (a.ok !== true) return { error: String(a.error), reason: 'rule_exception' };
  const outs = a.matched === true ? (a.outputs as Val[]) : [];
  const twins = b.matched === true && Array.isArray(b.outputs) ? b.outputs : [];
  if (outs.length !== twins.length) throw new Error(`weir eval: the twin line has ${twins.length} outputs, the line ${outs.length}: ${line}`);
  return { records: outs.map((r, i) => merge(r, twins[i]) as { [k: string]: Val }) };
}

/** A column's expected content: NULL, a text, or weir's own receive time / event id (checked by a predicate). */
type Cell = { readonly kind: 'null' } | { readonly kind: 'text'; readonly text: string } | { readonly kind: 'time' } | { readonly kind: 'id' };

interface ExpectedRow {
  readonly cells: Cell[];
  /** Why PostgreSQL (or weir, before it) refuses the row; empty: stored. */
  readonly refusals: string[];
}

interface Col {
  readonly name: string;
  readonly type: ColType;
  readonly notNull: boolean;
  readonly template: Template;
}

export interface Mismatch {
  readonly rule: string;
  readonly sql: string;
  readonly columns: Record<string, string>;
  readonly payload: string;
  readonly what: string;
  readonly expected: unknown;
  readonly got: unknown;
}

export interface Verdict {
  readonly cases: number;
  readonly rows: number;
  readonly letters: number;
  /** Dead letters by reason, refusals by the server's message up to its first colon. */
  readonly reasons: Record<string, number>;
  readonly mismatches: Mismatch[];
}

const SENTINEL_TEXTS = [String(SENTINEL_TS), SENTINEL_ID];
const ID_FORM = /^[0-9a-f]{22}$/;

export async function compareRound(
  tag: string,
  plan: readonly PlannedRule[],
  evalOut: ReadonlyMap<string, Array<[string, string]>>,
  stored: StoredRound,
): Promise<Verdict> {
  const [t0, t1] = stored.window;
  // What each cell needs from PostgreSQL: the text of a parameter converted to the column's type.
  const casts = new Map<string, { v: string; t: ColType; r?: string }>();
  const castKey = (v: string, t: ColType) => `${t}\u0000${v}`;
  const plans: Array<{ p: PlannedRule; cols: Col[]; messages: Array<{ topic: string; outputs: Outputs; rows: Array<() => ExpectedRow> }> }> = [];

  for (const p of plan) {
    const key = keyTemplate(p.rule);
    const cols: Col[] = [
      ...(key ? [{ name: 'k', type: 'text' as const, notNull: false, template: key }] : []),
      ...p.rule.columns.map((c, i) => ({ name: `c${i}`, ...c })),
    ];
    const lines = evalOut.get(p.id)!;
    const messages = p.payloads.map((m, j) => {
      const outputs: Outputs =
        p.rule.payloadFormat === 'json' && !isJson(m.text)
          ? { error: 'not JSON, and the rule takes JSON payloads only', reason: 'invalid_payload' }
          : outputsOf(lines[j]![0], lines[j]![1]);
      // What weir's event holds is what `weir eval` was given (username and peerhost: unset).
      const event = { username: undefined, peerhost: undefined, ...(readJson(JSON.stringify(evalEvent(tag, p.id, j, m.text))) as object) } as EventView;
      const rows = 'error' in outputs ? [] : outputs.records.map((record) => expectRow(record, event));
      return { topic: topicOf(tag, p.id, j), outputs, rows };
    });
    plans.push({ p, cols, messages });

    function expectRow(record: { [k: string]: Val }, event: EventView): () => ExpectedRow {
      const prepared = cols.map((c) => {
        const v = renderTemplate(c.template, record, event);
        const only = c.template.length === 1 && typeof c.template[0] !== 'string' && c.template[0]!.steps.length === 0;
        let opaque: 'time' | 'id' | undefined;
        if (only && v === SENTINEL_TS) opaque = 'time';
        else if (only && v === SENTINEL_ID) opaque = 'id';
        else {
          const seen =
            typeof v === 'string'
              ? v
              : JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && 'value' in x ? (x as { value: number }).value : x));
          if (seen !== undefined && SENTINEL_TEXTS.some((s) => seen.includes(s)))
            throw new Error(`generator: rule ${p.id} reads weir's id or receive time inside ${templateText(c.template)}; the oracle cannot know it`);
        }
        const param = paramText(opaque === 'time' ? t0 : opaque === 'id' ? 'abcdef0123456789abcdef' : v, c.type);
        if (typeof param === 'string' && !param.includes('\u0000')) {
          const k = castKey(param, c.type);
          if (!casts.has(k)) casts.set(k, { v: param, t: c.type });
        }
        return { c, param, opaque, v };
      });
      const row = (): ExpectedRow => {
        const cells: Cell[] = [];
        const refusals: string[] = [];
        for (const { c, param, opaque, v } of prepared) {
          if (param === null) {
            if (c.notNull) refusals.push(`null value in column "${c.name}"`);
            cells.push({ kind: 'null' });
          } else if (typeof param !== 'string') {
            refusals.push(param.client);
            cells.push({ kind: 'null' });
          } else if (param.includes('\u0000')) {
            refusals.push('invalid byte sequence for encoding "UTF8": 0x00');
            cells.push({ kind: 'null' });
          } else {
            const r = casts.get(castKey(param, c.type))!.r!;
            // An opaque cell was cast with a stand-in value: its error is compared up to the value.
            // The values insert sends a list into a scalar column as pg's array literal ({1,2}, a
            // NUL inside as it is), refused as the unnest insert's JSON text ([1,2]) is, but in
            // other words: any error will do.
            const asArray = Array.isArray(v) && p.rule.insertMode === 'values' && c.type !== 'text' && c.type !== 'jsonb';
            if (r.startsWith('error ')) refusals.push(asArray ? '' : opaque ? r.slice(6).replace(/: ".*$/s, '') : r.slice(6));
            cells.push(opaque ? { kind: opaque } : { kind: 'text', text: r.slice(3) });
          }
        }
        return { cells, refusals };
      };
      return row;
    }
  }

  await castAll(stored.pgUrl, [...casts.values()]);

  const mismatches: Mismatch[] = [];
  let cases = 0;
  const idOwner = new Map<string, string>();
  const lettersByTopic = new Map<string, StoredRound['letters'][number][]>();
  for (const l of stored.letters) lettersByTopic.set(l.topic, [...(lettersByTopic.get(l.topic) ?? []), l]);
  for (const { p, cols, messages } of plans) {
    const sql = sqlOf(tag, p);
    const columns = Object.fromEntries(cols.map((c) => [`${c.name} ${c.type}${c.notNull ? ' NOT NULL' : ''}`, templateText(c.template)]));
    const bad = (payload: string, what: string, expected: unknown, got: unknown) => mismatches.push({ rule: p.id, sql, columns, payload, what, expected, got });
    const storedRows = [...(stored.rows.get(p.id) ?? [])];
    const keyed = cols[0]?.name === 'k';
    // Keyed: the stored rows by key, each message taking its own; what is left is no message's.
    // Unkeyed (the rule writes both topic and clientid): all of them matched at once, below.
    const byKey = new Map<string | null, Array<Array<string | null>>>();
    if (keyed) for (const r of storedRows) byKey.set(r[0]!, [...(byKey.get(r[0]!) ?? []), r]);
    const unkeyed: Array<{ row: ExpectedRow; payload: string; topic: string }> = [];
    for (const [j, m] of messages.entries()) {
      cases++;
      const payload = p.payloads[j]!.text;
      const expected = m.rows.map((f) => f());
      const letters = lettersByTopic.get(m.topic) ?? [];
      lettersByTopic.delete(m.topic);
      if (letters.some((l) => l.rule_id !== p.id)) bad(payload, `dead letters of this message name rule ${p.id}`, p.id, letters);
      // Dead letters: one per refused row, or one for a rule that failed on the message.
      if ('error' in m.outputs) {
        if (letters.length !== 1 || letters[0]!.reason !== m.outputs.reason)
          bad(payload, `the rule failed on the message: one ${m.outputs.reason} dead letter`, { error: m.outputs.error }, letters);
      } else {
        const refused = expected.filter((e) => e.refusals.length);
        const okLetter = (l: (typeof letters)[number]) =>
          (l.reason === 'rejected' || l.reason === 'encode_error') &&
          refused.some((e) => e.refusals.some((why) => why.includes('outside what a timestamp') || l.error.includes(why)));
        if (letters.length !== refused.length || !letters.every(okLetter))
          bad(payload, 'dead letters: one per row the column types refuse, with the server error', { refusals: refused.map((e) => e.refusals) }, letters);
      }
      const want = expected.filter((e) => !e.refusals.length);
      if (!keyed) {
        unkeyed.push(...want.map((row) => ({ row, payload, topic: m.topic })));
        continue;
      }
      // The key is the message's topic or client id, whichever the rule does not write (keyTemplate).
      const k = (cols[0]!.template[0] as { root: string }).root === 'topic' ? m.topic : `m${j}`;
      const got = byKey.get(k) ?? [];
      byKey.delete(k);
      const left = matchRows(want, got, m.topic, idOwner);
      if (left.missing.length || left.extra.length)
        bad(payload, 'stored rows differ from the oracle', { rows: left.missing.map(show) }, { rows: left.extra, of: got.length });
    }
    if (!keyed) {
      const left = matchRows(
        unkeyed.map((u) => u.row),
        storedRows,
        undefined,
        idOwner,
      );
      if (left.missing.length || left.extra.length)
        bad('(all of the rule’s payloads)', 'stored rows differ from the oracle (no key column)', left.missing.map(show), left.extra);
    }
    for (const [k, rows] of byKey) bad('(none: no message has this key)', 'stored rows that no message accounts for', [], { key: k, rows });
  }
  for (const [topic, ls] of lettersByTopic)
    mismatches.push({ rule: '', sql: '', columns: {}, payload: '', what: 'dead letters of no published message', expected: [], got: { topic, letters: ls } });
  const rows = [...stored.rows.values()].reduce((n, r) => n + r.length, 0);
  const reasons: Record<string, number> = {};
  for (const l of stored.letters) {
    const k = `${l.reason}: ${l.error.split(':')[0]!.replace(/"c\d+"|"oracle_r\d+"/g, '"…"')}`;
    reasons[k] = (reasons[k] ?? 0) + 1;
  }
  return { cases, rows, letters: stored.letters.length, reasons, mismatches };

  function show(e: ExpectedRow): unknown {
    return e.cells.map((c) => (c.kind === 'text' ? c.text : c.kind === 'null' ? null : `<${c.kind}>`));
  }

  /** Pairs stored rows with expected ones (cell by cell); what is left on either side is a mismatch. */
  function matchRows(want: ExpectedRow[], got: Array<Array<string | null>>, topic: string | undefined, owners: Map<string, string>) {
    const rest = [...want];
    const extra: Array<Array<string | null>> = [];
    for (const r of got) {
      const i = rest.findIndex((e) => e.cells.every((c, x) => cellMatches(c, r[x] ?? null)));
      if (i < 0) {
        extra.push(r);
        continue;
      }
      const e = rest.splice(i, 1)[0]!;
      e.cells.forEach((c, x) => {
        if (c.kind !== 'id' || topic === undefined) return;
        const id = r[x]!;
        const owner = owners.get(id);
        if (owner !== undefined && owner !== topic) extra.push(r);
        owners.set(id, topic);
      });
    }
    return { missing: rest, extra };
  }

  function cellMatches(c: Cell, s: string | null): boolean {
    switch (c.kind) {
      case 'null':
        return s === null;
      case 'text':
        return s === c.text;
      case 'time': {
        const n = Number(s);
        return s !== null && Number.isInteger(n) && n >= t0 - 2000 && n <= t1 + 2000;
      }
      case 'id':
        return s !== null && ID_FORM.test(s);
    }
  }
}

/** Each parameter text converted to its column type by the server: `ok <text as read back>` or `error <message>`. */
async function castAll(url: string, casts: Array<{ v: string; t: ColType; r?: string }>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`CREATE OR REPLACE FUNCTION oracle_cast(v text, t text) RETURNS text LANGUAGE plpgsql AS $$
      DECLARE r text;
      BEGIN
        IF t = 'timestamptz' THEN EXECUTE 'SELECT ${readExpr('$1::timestamptz', 'timestamptz')}' INTO r USING v;
        ELSE EXECUTE format('SELECT ($1::%s)::text', t) INTO r USING v;
        END IF;
        RETURN 'ok ' || r;
      EXCEPTION WHEN others THEN RETURN 'error ' || SQLERRM;
      END $$`);
    for (let i = 0; i < casts.length; i += 2000) {
      const chunk = casts.slice(i, i + 2000);
      const res = await c.query<{ r: string }>('SELECT oracle_cast(v, t) AS r FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(v, t, n) ORDER BY n', [
        chunk.map((x) => x.v),
        chunk.map((x) => x.t),
      ]);
      res.rows.forEach((row, j) => {
        chunk[j]!.r = row.r;
      });
    }
  } finally {
    await c.end();
  }
}
