// Generated rules, columns and payloads for the content oracle (oracle.test.ts): aliases that
// collide with event field names and with names a runtime object may carry (`seq`, `decoded`,
// `constructor`, `__proto__`), nested paths, `SELECT *`, FOREACH with and without DO, over
// payloads with missing fields, arrays and scalars at the root, `{}`, nulls, numbers at the
// edges, unicode and strings that look like JSON.
import fc from 'fast-check';
import { type ColType, FALLBACK_FIELDS, type Ref, type Step, type Template } from './oracle-values.js';

/** Names an alias, an item or a template root may take: event fields, internal-looking names, plain ones. */
export const NAMES = [
  'topic',
  'id',
  'timestamp',
  'publish_received_at',
  'clientid',
  'qos',
  'payload',
  'flags',
  'pub_props',
  'username',
  'peerhost',
  'node',
  'event',
  'metadata',
  'seq',
  'decoded',
  'raw',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'item',
  'temp',
  'note',
  'a',
  'v',
] as const;

/**
 * Roots whose event value is not known from the message (`id`, the receive time): a template
 * reads them only whole (`${timestamp}`), never inside text or under a path, and a rule never
 * computes with them, so the value that reaches a column is the event's own, checked by a
 * predicate (oracle.test.ts). An alias of that name is generated like any other.
 */
export const OPAQUE_ROOTS: ReadonlySet<string> = new Set(['id', 'timestamp', 'publish_received_at']);

/** Keys of payload maps, and of paths into them. */
const KEYS = ['a', 'b', 'seq', 'temp', 'note', 'arr', 'x', 'topic', 'id', 'constructor', '__proto__'] as const;
/** More keys payloads carry (never in a path). */
const PAYLOAD_ONLY_KEYS = ['é', '🚀', '', 'a b', 'toString', 'timestamp'] as const;

const name = fc.constantFrom(...NAMES);
const key = fc.constantFrom(...KEYS);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: key.map((k) => ({ key: k })) },
  { weight: 1, arbitrary: fc.constantFrom(1, 2, -1, 0).map((i) => ({ index: i })) },
);
const stepsText = (steps: readonly Step[]) => steps.map((s) => ('key' in s ? `.${s.key}` : `[${s.index}]`)).join('');

// ---- payloads ----

/** A payload as written: numbers keep their text (`2.0`, `-0`, `1e308`, 30-digit decimals). */
export type PTree = { readonly num: string } | string | boolean | null | readonly PTree[] | { readonly obj: ReadonlyArray<readonly [string, PTree]> };

const EDGE_NUMBERS = [
  '0',
  '-0',
  '-0.0',
  '1',
  '-1',
  '2.0',
  '1.5',
  '0.1',
  '100',
  '1E2',
  '1e-7',
  '1e21',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '5e-324',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '12345678901234567890',
  '123456789012345678901234567890.123456789',
  '3.14159265358979',
  '1733140000123',
];
const numberArb: fc.Arbitrary<PTree> = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
    { weight: 1, arbitrary: fc.integer().map(String) },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  )
  .map((n) => ({ num: n }));

const JSONISH = ['{"a":1}', '[1,2,3]', '{"seq":5}', '12', '2.0', ' 7 ', 'true', 'null', '', '"q"', '1e308', 't', 'yes', '2024-12-05 10:00:00+00'];
const UNICODE = ['é', '🚀🚀', '日本語', 'a\u0000b', 'a\\b', 'line\nbreak', "it's", '\u{1F600}x\u{10FFFF}', 'NULL', '{', 'a,b "c"'];
const stringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
  { weight: 2, arbitrary: fc.constantFrom(...JSONISH) },
  { weight: 2, arbitrary: fc.constantFrom(...UNICODE) },
);

const scalarArb: fc.Arbitrary<PTree> = fc.oneof(
  { weight: 4, arbitrary: numberArb },
  { weight: 3, arbitrary: stringArb },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
);

const treeArb: fc.Arbitrary<PTree> = fc.letrec<{ tree: PTree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: scalarArb },
    { weight: 2, arbitrary: fc.array(tie('tree'), { maxLength: 4 }) },
    {
      weight: 3,
      arbitrary: fc
        .array(fc.tuple(fc.oneof({ weight: 5, arbitrary: key }, { weight: 1, arbitrary: fc.constantFrom(...PAYLOAD_ONLY_KEYS) }), tie('tree')), {
          maxLength: 5,
        })
        .map((obj) => ({ obj })),
    },
  ),
})).tree;

/** The text a payload is published as; `nullAs`: what JSON null is written as (the twin, below). */
export function payloadText(t: PTree, nullAs = 'null'): string {
  if (t === null) return nullAs;
  if (typeof t === 'string' || typeof t === 'boolean') return JSON.stringify(t);
  if (Array.isArray(t)) return `[${t.map((x) => payloadText(x, nullAs)).join(',')}]`;
  if ('num' in t) return t.num;
  const o = t as { obj: ReadonlyArray<readonly [string, PTree]> };
  return `{${o.obj.map(([k, v]) => `${JSON.stringify(k)}:${payloadText(v, nullAs)}`).join(',')}}`;
}

export interface GenPayload {
  /** The bytes published (UTF-8). */
  readonly text: string;
  /**
   * The same payload with every JSON null written as NULL_TWIN: `weir eval` prints an absent
   * value and null alike, so the oracle evaluates both and tells them apart (oracle.test.ts).
   */
  readonly twin: string;
}

export const NULL_TWIN = '"<<oracle: a JSON null>>"';

const NOT_JSON = ['nope', '{"a":', "{'a':1}", 'NaN', 'undefined', '[1,2', 'a\u0000b', '{"seq": 1}}'];

export const payloadArb: fc.Arbitrary<GenPayload> = fc
  .oneof(
    { weight: 7, arbitrary: fc.array(fc.tuple(key, treeArb), { maxLength: 6 }).map((obj): PTree => ({ obj })) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.array(fc.tuple(key, treeArb), { maxLength: 4 }), fc.array(treeArb, { maxLength: 4 }))
        .map(([obj, arr]): PTree => ({ obj: [...obj, ['arr', arr]] })),
    },
    { weight: 2, arbitrary: fc.array(treeArb, { maxLength: 5 }) },
    { weight: 2, arbitrary: scalarArb },
    { weight: 1, arbitrary: fc.constant<PTree>({ obj: [] }) },
    { weight: 1, arbitrary: fc.constantFrom(...NOT_JSON) },
  )
  .map((t) =>
    typeof t === 'string' && NOT_JSON.includes(t) ? { text: t, twin: t } : { text: payloadText(t as PTree), twin: payloadText(t as PTree, NULL_TWIN) },
  );

// ---- rules ----

export interface GenColumn {
  readonly type: ColType;
  readonly notNull: boolean;
  readonly template: Template;
}

export interface GenRule {
  /** The statement up to FROM (the test adds `FROM "<the rule's topic filter>"`). */
  readonly head: string;
  /** The keys the rule's outputs have: aliases, unaliased fields' first names, the FOREACH item. */
  readonly written: readonly string[];
  readonly columns: readonly GenColumn[];
  readonly insertMode: 'unnest' | 'values';
  /** json (the default): a payload that is not JSON is dead-lettered as invalid_payload before the rule runs. */
  readonly payloadFormat: 'json' | 'raw';
}

const EVENT_EXPRS = ['clientid', 'topic', 'qos', 'flags', 'flags.retain', 'pub_props', 'payload', 'node', 'event', 'username', 'peerhost'] as const;
const LITERALS = ["'text'", "'é🚀'", "'it''s'", '12', '2.0', '-0.5', 'true', '9007199254740993', '1e308'] as const;

interface Field {
  readonly sql: string;
  readonly alias?: string;
}

const aliasArb = fc.oneof({ weight: 4, arbitrary: name }, { weight: 1, arbitrary: fc.tuple(name, key).map(([n, k]) => `${n}.${k}`) });

const payloadPathArb = fc.array(stepArb, { minLength: 1, maxLength: 2 }).map((steps) => `payload${stepsText(steps)}`);

function fieldArb(extraPaths: fc.Arbitrary<string>[]): fc.Arbitrary<Field> {
  const aliased = (expr: fc.Arbitrary<string>, p: number) =>
    fc.tuple(expr, fc.integer({ min: 1, max: 100 }), aliasArb).map(([sql, roll, alias]): Field => (roll <= p ? { sql, alias } : { sql }));
  return fc.oneof(
    { weight: 5, arbitrary: aliased(payloadPathArb, 80) },
    { weight: 2, arbitrary: aliased(fc.constantFrom(...EVENT_EXPRS), 70) },
    { weight: 1, arbitrary: aliased(fc.constantFrom(...LITERALS), 100) },
    ...extraPaths.map((p) => ({ weight: 4, arbitrary: aliased(p, 85) })),
  );
}

const fieldSql = (f: Field) => (f.alias === undefined ? f.sql : `${f.sql} AS ${f.alias}`);
/** The output key a field writes: its alias's first name, or an unaliased path's (`flags.retain` → `flags`). */
const keyOf = (f: Field) => /^[^.[]*/.exec(f.alias ?? f.sql)![0];

const selectArb = fc
  .tuple(fc.array(fieldArb([]), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 5 }))
  .map(([fields, star, at]) => {
    const parts = fields.map(fieldSql);
    if (star < 3) parts.splice(Math.min(at, parts.length), 0, '*');
    return { head: `SELECT ${parts.join(', ')}`, written: [...new Set(fields.map(keyOf))] };
  });

const ITEM_NAMES = ['x', 'item', 'seq', 'topic', 'clientid', 'id', 'v'] as const;
const COLLECTIONS = ['payload', 'payload.arr', 'payload.a', 'payload.arr[1]', 'payload.b.arr'] as const;

const foreachArb = fc
  .tuple(fc.constantFrom(...COLLECTIONS), fc.option(fc.constantFrom(...ITEM_NAMES), { nil: undefined }), fc.boolean())
  .chain(([collection, item, withDo]) => {
    const it = item ?? 'item';
    const itemPath = fc.array(stepArb, { maxLength: 2 }).map((steps) => `${it}${stepsText(steps)}`);
    const doFields = withDo ? fc.array(fieldArb([itemPath]), { minLength: 1, maxLength: 4 }) : fc.constant<Field[]>([]);
    return doFields.map((fields) => ({
      head: `FOREACH ${collection}${item ? ` AS ${item}` : ''}${withDo ? ` DO ${fields.map(fieldSql).join(', ')}` : ''}`,
      written: withDo ? [...new Set(fields.map(keyOf))] : [it],
    }));
  });

const COL_TYPES: ReadonlyArray<[ColType, boolean, number]> = [
  ['text', false, 10],
  ['text', true, 2],
  ['jsonb', false, 5],
  ['bigint', false, 2],
  ['bigint', true, 1],
  ['double precision', false, 2],
  ['numeric', false, 1],
  ['boolean', false, 1],
  ['timestamptz', false, 1],
];
const colTypeArb = fc.oneof(...COL_TYPES.map(([t, nn, w]) => ({ weight: w, arbitrary: fc.constant({ type: t, notNull: nn }) })));

/**
 * Roots a template may name: what the rule's outputs have, or an event field. Any other name is
 * refused when the rule is loaded (config.template_name, since the issue 28 fix), so the
 * internal-looking names reach templates as aliases: selected, and missing from most payloads.
 */
const EVENT_NAMES = fc.constantFrom(...FALLBACK_FIELDS);

function refArb(written: readonly string[]): fc.Arbitrary<Ref> {
  const roots = written.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...written) }, { weight: 1, arbitrary: EVENT_NAMES }) : EVENT_NAMES;
  return fc.tuple(roots, fc.array(stepArb, { maxLength: 2 }), fc.boolean()).map(([root, steps, bare]) => ({ root, steps: bare ? [] : steps }));
}

function templateArb(written: readonly string[], type: ColType): fc.Arbitrary<Template> {
  const ref = refArb(written);
  // An opaque root (OPAQUE_ROOTS) only whole and bare; `id` only into text (its form is hex digits).
  const wholeRef = ref.map((r): Ref => (OPAQUE_ROOTS.has(r.root) ? { root: r.root, steps: [] } : r)).filter((r) => r.root !== 'id' || type === 'text');
  const inText = ref.filter((r) => !OPAQUE_ROOTS.has(r.root));
  const lit = fc.constantFrom('', '-', 'v=', ' é ', '🚀', '{', 'null', '$');
  // Text takes any template; other types mostly a bare one (text around a value rarely converts).
  const w = type === 'text' ? [5, 3, 1, 1] : type === 'jsonb' ? [10, 1, 0, 1] : [12, 1, 0, 1];
  return fc.oneof(
    { weight: w[0]!, arbitrary: wholeRef.map((r) => [r]) },
    { weight: w[1]!, arbitrary: fc.tuple(lit, inText, lit).map(([a, r, b]) => [a || '<', r, b]) },
    { weight: w[2]!, arbitrary: fc.tuple(inText, inText).map(([r1, r2]) => [r1, r2]) },
    { weight: w[3]!, arbitrary: fc.constantFrom('constant', '12', 'true', '{"k":1}').map((s) => [s]) },
  );
}

export const ruleArb: fc.Arbitrary<GenRule> = fc
  .tuple(
    fc.oneof({ weight: 3, arbitrary: selectArb }, { weight: 2, arbitrary: foreachArb }),
    fc.constantFrom<'unnest' | 'values'>('unnest', 'unnest', 'values'),
    fc.constantFrom<'json' | 'raw'>('json', 'raw'),
  )
  .chain(([{ head, written }, insertMode, payloadFormat]) =>
    fc
      .array(
        colTypeArb.chain(({ type, notNull }) => templateArb(written, type).map((template): GenColumn => ({ type, notNull, template }))),
        { minLength: 1, maxLength: 4 },
      )
      .map((columns): GenRule => ({ head, written, columns, insertMode, payloadFormat })),
  );
