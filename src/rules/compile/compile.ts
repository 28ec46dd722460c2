// A parsed statement → a CompiledRule whose evaluate() is a handful of closures. SELECT runs its
// fields in order (each alias written back so that later fields and WHERE can read it), then
// WHERE; FOREACH runs its fields, WHERE, then DO/INCASE per element of the collection — the
// order EMQX 5 evaluates them in, so the same rules fail on the same messages.
import { forEachChild, forEachStatementExpr, type Expr, type Field, type Statement, type Target } from '../sql/ast.js';
import { compileExpr, type CompileEnv } from './compile-expr.js';
import { budgetLeft, checkBudget, endEvaluation, overBudget, resumeEvaluation, startEvaluation } from './budget.js';
import { asEvalError, RuleEvalError } from '../errors.js';
import { decodedPayload, EVENT_FIELDS, eventReader, inputSnapshot, type Ev } from './event-fields.js';
import { FUNCTIONS } from '../functions/all.js';
import type { FunctionRegistry } from '../functions/registry.js';
import { LIMITS } from '../limits.js';
import { parseRule } from '../sql/parser.js';
import { defineKey, putPath, type PutStep } from './paths.js';
import { PendingCall, Scope, type SettledCalls } from './scope.js';
import { shared, sharedKey } from './shared-closures.js';
import { compileTopicFilter } from '../topic.js';
import type { CompiledRule, EvalResult, MessageContext, OutputRecord } from '../types.js';
import { isBinary, type Obj } from '../values/value-types.js';

/** A CompiledRule with what the compiler learnt about it. */
export interface CompiledSqlRule extends CompiledRule {
  readonly sql: string;
  /** `payload.a.b` paths the rule reads. */
  readonly payloadPaths: readonly string[];
  /**
   * The root names every output record of the rule has: a SQL rule writes each field it selects
   * (an alias, a path's root, `*`'s event fields), even when its value is missing. `weir check`
   * holds sink templates against them.
   */
  readonly outputNames: ReadonlySet<string>;
}

type FieldOp = (s: Scope, out: Obj) => void;

const NO_MATCH: EvalResult = Object.freeze({ matched: false }) as EvalResult;
const NO_SLOTS: unknown[] = [];

/** Parses and compiles rule SQL; throws a RuleError for any problem found before running it. */
export function compileSql(sql: string, registry: FunctionRegistry = FUNCTIONS): CompiledSqlRule {
  return compileStatement(parseRule(sql), sql, registry);
}

export function compileStatement(st: Statement, sql: string, registry: FunctionRegistry): CompiledSqlRule {
  const slots = new Map<string, number>();
  const slotNames: string[] = [];
  const addSlot = (name: string): void => {
    if (!slots.has(name)) {
      slots.set(name, slotNames.length);
      slotNames.push(name);
    }
  };
  // A name gets a slot when something writes it that another part of the rule may read: aliases
  // of read names (or any alias when `*` may copy it out), the FOREACH item, and `payload` once a
  // path field has turned it into the decoded map (EMQX's handle_alias).
  const reads = collectReads(st);
  const allFields = [...st.fields, ...(st.kind === 'foreach' ? (st.doFields ?? []) : [])];
  const hasStar = allFields.some((f) => f.kind === 'star');
  for (const f of allFields) {
    if (f.kind !== 'field') continue;
    const root = f.alias?.root ?? (f.expr.kind === 'path' ? f.expr.root : undefined);
    if (root === undefined) continue;
    if (
      f.alias
        ? reads.all.has(root) || hasStar
        : root === 'payload' && f.expr.kind === 'path' && f.expr.segments.length > 0 && (reads.bare.has('payload') || hasStar)
    ) {
      addSlot(root);
    }
  }
  let itemName = 'item';
  if (st.kind === 'foreach') {
    const last = st.fields[st.fields.length - 1];
    if (last?.kind === 'field' && last.alias && last.alias.segments.length === 0) itemName = last.alias.root;
    addSlot(itemName);
  }
  const env: CompileEnv = {
    sql,
    registry,
    slotOf: (name) => slots.get(name),
    usesAsync: false,
    payloadPaths: new Set(),
  };
  // A function with a start-up step (jq's WebAssembly worker) takes it now, before the rule's
  // first message, and only for a rule that calls it.
  forEachStatementExpr(st, function prepare(e) {
    if (e === undefined) return;
    if (e.kind === 'call') registry.get(e.name)?.prepare?.();
    forEachChild(e, prepare);
  });
  const filters = st.from.map((f) => f.filter);
  const matchers = filters.map(compileTopicFilter);
  const fromMatches = matchers.length === 1 ? matchers[0]! : (topic: string) => matchers.some((m) => m(topic));
  const where = st.where ? compileExpr(st.where, env) : undefined;
  const nSlots = slotNames.length;

  let run: (s: Scope) => EvalResult;
  if (st.kind === 'select') {
    const ops = st.fields.map((f) => compileField(f, env, slotNames));
    run = (s) => {
      const out: Obj = {};
      for (let i = 0; i < ops.length; i++) (ops[i] as FieldOp)(s, out);
      if (where !== undefined && where(s) !== true) return NO_MATCH;
      return { matched: true, outputs: [out] };
    };
  } else {
    run = compileForeach(st, env, slotNames, itemName, where);
  }

  const async = env.usesAsync;
  const fromOk = (ctx: MessageContext): boolean => {
    const topic = ctx.event.topic;
    return typeof topic === 'string' && fromMatches(topic);
  };
  const runSync = (ctx: MessageContext, ruleId: string): EvalResult => {
    const s = new Scope(ctx, ruleId, nSlots === 0 ? NO_SLOTS : new Array(nSlots), undefined);
    startEvaluation();
    try {
      return run(s);
    } catch (err) {
      throw asEvalError(err);
    } finally {
      endEvaluation();
    }
  };
  const runAsync = (ctx: MessageContext, ruleId: string): Promise<EvalResult> => evaluateAsync(ctx, ruleId, nSlots, run);
  const evaluateRouted = async ? runAsync : runSync;
  const evaluate = async
    ? async (ctx: MessageContext, ruleId: string): Promise<EvalResult> => (fromOk(ctx) ? runAsync(ctx, ruleId) : NO_MATCH)
    : (ctx: MessageContext, ruleId: string): EvalResult => (fromOk(ctx) ? runSync(ctx, ruleId) : NO_MATCH);
  return { filters, async, evaluate, evaluateRouted, sql, payloadPaths: [...env.payloadPaths], outputNames: outputNamesOf(st, itemName, slotNames) };
}

/** The root names of a statement's output records (see CompiledSqlRule.outputNames), read as compileForeach and compilePut write them. */
function outputNamesOf(st: Statement, itemName: string, slotNames: readonly string[]): Set<string> {
  const names = new Set<string>();
  const add = (fields: readonly Field[]): void => {
    for (const f of fields) {
      if (f.kind === 'star') for (const n of [...EVENT_FIELDS, ...slotNames]) names.add(n);
      else names.add((f.alias ?? defaultTarget(f)).root);
    }
  };
  if (st.kind === 'select') add(st.fields);
  else if (st.doFields) add(st.doFields);
  else {
    // Without DO, each output is the event fields, what FOREACH selected and the item.
    for (const n of EVENT_FIELDS) names.add(n);
    add(st.fields);
    names.add(itemName);
  }
  return names;
}

/**
 * Re-runs the synchronous closures until every asynchronous call they reach has settled. The runs
 * share one evaluation budget (the waits between them are not charged: JSONata has its own timeout).
 */
async function evaluateAsync(ctx: MessageContext, ruleId: string, nSlots: number, run: (s: Scope) => EvalResult): Promise<EvalResult> {
  const settled: SettledCalls = { next: 0, results: [] };
  let left: number = LIMITS.evaluationBudgetMs;
  let pending: Promise<void>;
  for (let round = 0; ; round++) {
    settled.next = 0;
    const s = new Scope(ctx, ruleId, new Array(nSlots), settled);
    resumeEvaluation(left);
    try {
      return run(s);
    } catch (err) {
      if (!(err instanceof PendingCall)) throw asEvalError(err);
      if (round > LIMITS.maxForeachOutputs) throw new RuleEvalError('rule.limit', 'too many asynchronous calls in one evaluation');
      left = budgetLeft();
      if (left <= 0) throw overBudget('asynchronous calls');
      pending = err.promise;
    } finally {
      endEvaluation();
    }
    await pending;
  }
}

function compileForeach(
  st: Extract<Statement, { kind: 'foreach' }>,
  env: CompileEnv,
  slotNames: string[],
  itemName: string,
  where: Ev | undefined,
): (s: Scope) => EvalResult {
  const head = st.fields.slice(0, -1).map((f) => compileField(f, env, slotNames));
  const last = st.fields[st.fields.length - 1] as Field;
  // The parser rejects `*` as the last FOREACH field.
  const lastField = last as Extract<Field, { kind: 'field' }>;
  // `FOREACH payload` iterates the decoded payload (EMQX's ensure_list on the payload column).
  const barePayload = lastField.expr.kind === 'path' && lastField.expr.root === 'payload' && lastField.expr.segments.length === 0;
  const collectionExpr = compileExpr(lastField.expr, env);
  const collection: Ev = barePayload ? (s) => (isBinary(collectionExpr(s)) ? decodedPayload(s) : collectionExpr(s)) : collectionExpr;
  const putLast = compilePut(lastField, env);
  const itemSlot = env.slotOf(itemName) as number;
  const doOps = st.doFields?.map((f) => compileField(f, env, slotNames));
  const incase = st.incase ? compileExpr(st.incase, env) : undefined;
  return (s) => {
    const selected: Obj = {};
    for (const op of head) op(s, selected);
    const list = collection(s);
    putLast(s, selected, list);
    if (where !== undefined && where(s) !== true) return NO_MATCH;
    const outputs: OutputRecord[] = [];
    if (!Array.isArray(list)) return { matched: true, outputs };
    if (list.length > LIMITS.maxForeachOutputs) {
      throw new RuleEvalError('rule.limit', `FOREACH over ${list.length} elements, more than ${LIMITS.maxForeachOutputs}`);
    }
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      // Every 32nd element (every 16th cost a FOREACH over 1,000 elements 4-10 %, every 32nd
      // 1.5-3 %, bench/regex.ts); the budget's clock starts at the first check, so a FOREACH
      // over fewer elements never reads it. A heavy element (a long regex, jq) checks itself.
      if ((i & 31) === 31) checkBudget('FOREACH');
      // DO and INCASE see the event fields, what FOREACH selected and the item; without DO the
      // output is all of them (EMQX's filter_collection over the columns merged with the selected).
      const slots = s.slots.slice();
      slots[itemSlot] = item;
      const is = new Scope(s.ctx, s.ruleId, slots, s.settled);
      if (incase !== undefined && incase(is) !== true) continue;
      if (doOps === undefined) {
        const rec = inputSnapshot(is, []);
        for (const k of Object.keys(selected)) defineKey(rec, k, selected[k]);
        defineKey(rec, itemName, item);
        outputs.push(rec);
        continue;
      }
      const out: Obj = {};
      for (const op of doOps) op(is, out);
      outputs.push(out);
    }
    return { matched: true, outputs };
  };
}

/** Where an unaliased field goes: its own path when it is one, else its text as a key. */
function defaultTarget(f: Extract<Field, { kind: 'field' }>): Target {
  const e = f.expr;
  if (e.kind === 'path') {
    let segs = e.segments;
    // `payload.arr[1..2]` is output under payload.arr (EMQX drops the range from the key).
    if (segs.length > 0 && segs[segs.length - 1]!.kind === 'slice') segs = segs.slice(0, -1);
    if (segs.every((s) => s.kind === 'key' || (s.kind === 'index' && s.index.kind === 'literal' && typeof s.index.value === 'number'))) {
      return { root: e.root, segments: segs };
    }
  }
  // `SELECT 'abc'` is output as abc: 'abc' (EMQX), any other expression under its own text.
  if (e.kind === 'literal' && typeof e.value === 'string') return { root: e.value, segments: [] };
  return { root: f.text, segments: [] };
}

function putSteps(t: Target, env: CompileEnv): PutStep[] {
  return t.segments.map((seg): PutStep => {
    if (seg.kind === 'key') return { key: seg.name };
    if (seg.kind === 'slice') return { index: 0 }; // a range on the written path writes nothing
    const e = seg.index;
    if (e.kind === 'literal' && typeof e.value === 'number') {
      // `[0]` is the head and `[-0]` the tail (EMQX's rulesql reads the sign of the zero).
      if (e.value === 0) return { index: Object.is(e.value, -0) ? 'tail' : 'head' };
      return { index: e.value };
    }
    return { at: compileExpr(e, env) };
  });
}

function compileField(f: Field, env: CompileEnv, slotNames: readonly string[]): FieldOp {
  if (f.kind === 'star') {
    return (s, out) => {
      Object.assign(out, inputSnapshot(s, slotNames));
    };
  }
  const ev = compileExpr(f.expr, env);
  const put = compilePut(f, env);
  const evKey = sharedKey(ev);
  const putKey = sharedKey(put);
  if (evKey !== undefined && putKey !== undefined) return shared(JSON.stringify(['field', evKey, putKey]), (): FieldOp => (s, out) => put(s, out, ev(s)));
  return (s, out) => put(s, out, ev(s));
}

/** Writes a field's value into the output record and, where it is read later, back into its slot. */
function compilePut(f: Extract<Field, { kind: 'field' }>, env: CompileEnv): (s: Scope, out: Obj, v: unknown) => void {
  const target = f.alias ?? defaultTarget(f);
  const root = target.root;
  const slot = env.slotOf(root);
  const path = putSteps(target, env);
  // An unaliased path field writes back the value it read: only `payload` changes (to the
  // decoded map), so that is the only write-back kept.
  const writesBack = slot !== undefined && (f.alias !== undefined || root === 'payload');
  // A field whose value is undefined is still a field (EMQX's nested_put writes it): it counts in
  // the record's keys and `weir eval` prints it as null. A slot holding undefined reads through
  // to the event, as EMQX's eval over [Selected, Columns] does.
  if (path.length === 0) {
    if (root === '__proto__') return (_s, out, v) => defineKey(out, root, v);
    if (!writesBack) {
      return shared(JSON.stringify(['put', root]), () => (_s: Scope, out: Obj, v: unknown) => {
        out[root] = v;
      });
    }
    return (s, out, v) => {
      out[root] = v;
      s.slots[slot] = v;
    };
  }
  const base = eventReader(root, true);
  // `AS payload.x` over a selected raw payload writes into the decoded payload (EMQX's
  // ensure_decoded_payload); a payload that is not JSON fails, as reading payload.x does.
  const current = root === 'payload' ? (s: Scope, out: Obj) => (isBinary(out[root]) ? decodedPayload(s) : out[root]) : (_s: Scope, out: Obj) => out[root];
  return (s, out, v) => {
    defineKey(out, root, putPath(Object.hasOwn(out, root) ? current(s, out) : undefined, path, 0, v, s));
    if (!writesBack) return;
    if (f.alias === undefined) {
      s.slots[slot] = decodedPayload(s);
      return;
    }
    const cur = s.slots[slot];
    s.slots[slot] = putPath(cur !== undefined ? cur : base(s), path, 0, v, s);
  };
}

interface Reads {
  /** Every name read as the root of a path. */
  readonly all: Set<string>;
  /** Names read on their own, without a path after them. */
  readonly bare: Set<string>;
}

function collectReads(st: Statement): Reads {
  const reads: Reads = { all: new Set(), bare: new Set() };
  const visit = (e: Expr | undefined): void => {
    if (!e) return;
    if (e.kind === 'path') {
      reads.all.add(e.root);
      if (e.segments.length === 0) reads.bare.add(e.root);
    }
    forEachChild(e, visit);
  };
  forEachStatementExpr(st, visit);
  // `AS a[b]` reads b.
  for (const f of [...st.fields, ...(st.kind === 'foreach' ? (st.doFields ?? []) : [])]) {
    if (f.kind === 'field') for (const seg of f.alias?.segments ?? []) if (seg.kind === 'index') visit(seg.index);
  }
  return reads;
}
