// The only place JSONata is called: JSONata rules (`jsonata:` instead of `sql:`) and the SQL
// function jsonata(expr, value) (weir's stand-in for EMQX's jq). JSONata evaluation is
// asynchronous and unbounded by nature, so every evaluation runs under JSONata's own time, depth
// and sequence-length guards (each surfaces as rule.limit), and its /regex/ literals run on RE2
// (linear-regex.ts): a JSONata timeout is checked between steps, never inside a RegExp call.
import { plainNumbers } from '../values/floats.js';
import jsonata from 'jsonata';
import { decodeJson, payloadText, RuleMessageContext } from './context.js';
import { RuleError, RuleEvalError } from '../errors.js';
import { EVENT_FIELDS } from './event-fields.js';
import { LIMITS } from '../limits.js';
import { JsonataRegex } from '../functions/linear-regex.js';
import { compileTopicFilter, validateTopicFilter } from '../topic.js';
import type { CompiledRule, EvalResult, MessageContext, OutputRecord } from '../types.js';
import { isObj, type Obj } from '../values/value-types.js';

type Expression = ReturnType<typeof jsonata>;

const OPTIONS = {
  timeout: LIMITS.jsonataTimeoutMs,
  stack: LIMITS.jsonataMaxDepth,
  sequence: LIMITS.maxArrayLength,
  // JSONata constructs its engine with `new` and calls exec/lastIndex only (linear-regex.ts).
  RegexEngine: JsonataRegex as unknown as RegExpConstructor,
};

interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
}

/** Compiles a JSONata expression; a syntax error is a RuleError located in the expression. */
export function compileJsonataExpression(expr: string): Expression {
  if (expr.length > LIMITS.maxSqlLength) {
    throw new RuleError('rule.too_long', `JSONata expression longer than ${LIMITS.maxSqlLength} characters`, expr);
  }
  try {
    return jsonata(expr, OPTIONS);
  } catch (err) {
    const e = err as JsonataFailure;
    const at = typeof e.position === 'number' ? Math.max(0, Math.min(expr.length, e.position - 1)) : 0;
    throw new RuleError('rule.jsonata_syntax', `JSONata ${e.code ?? 'error'}: ${e.message ?? String(err)}`, expr, {
      range: { start: at, end: at + 1 },
      expected: e.token,
      cause: err,
    });
  }
}

/** Evaluates a compiled expression; any failure becomes a RuleEvalError. */
export async function evaluateJsonata(expr: Expression, input: unknown): Promise<unknown> {
  try {
    return plain(await expr.evaluate(input));
  } catch (err) {
    if (err instanceof RuleEvalError) throw err;
    const e = err as JsonataFailure;
    const code = e.code === 'D1011' || e.code === 'D1012' ? 'rule.limit' : 'rule.jsonata_failed';
    throw new RuleEvalError(code, `JSONata ${e.code ?? 'error'}: ${e.message ?? String(err)}`, { cause: err });
  }
}

/** JSONata results as plain JSON-like values: sequences become arrays, functions disappear. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const p = plain(x);
      if (p !== undefined) out.push(p);
    }
    return out;
  }
  if (typeof v === 'function') return undefined;
  if (isObj(v)) {
    const out: Obj = {};
    for (const k of Object.keys(v)) {
      const p = plain(v[k]);
      if (p !== undefined) out[k] = p;
    }
    return out;
  }
  return v;
}

const cache = new Map<string, Expression>();

/** The SQL function jsonata(expr, value): expressions compiled once and cached (bounded). */
export async function jsonataCall(expr: unknown, value: unknown): Promise<unknown> {
  if (typeof expr !== 'string') throw new RuleEvalError('rule.type_error', 'jsonata(): the expression must be a string');
  let compiled = cache.get(expr);
  if (!compiled) {
    try {
      compiled = compileJsonataExpression(expr);
    } catch (err) {
      throw new RuleEvalError('rule.jsonata_syntax', (err as Error).message, { cause: err });
    }
    if (cache.size >= 1000) cache.clear();
    cache.set(expr, compiled);
  }
  // A string (the raw payload, say) is JSON text to decode, as EMQX's jq() reads a binary.
  let input = value;
  if (typeof value === 'string' || value instanceof Uint8Array) {
    input = decodeJson(typeof value === 'string' ? value : Buffer.from(value));
    if (input === undefined) throw new RuleEvalError('rule.bad_argument', 'jsonata(): the value is a string that is not JSON');
  }
  return evaluateJsonata(compiled, plainNumbers(input));
}

/** The document a JSONata rule sees: the event fields, with the payload decoded when it is JSON. */
export function jsonataInput(ctx: MessageContext, ruleId: string): Obj {
  const e = ctx.event as unknown as Record<string, unknown>;
  const input: Obj = {};
  for (const name of EVENT_FIELDS) {
    if (name === 'payload' || name === 'metadata') continue;
    if (e[name] !== undefined) input[name] = e[name];
  }
  const decoded = ctx.decodedPayload();
  // JSONata knows numbers only: a float with a whole value (2.0) is handed over as 2.
  input.payload = decoded !== undefined ? plainNumbers(decoded) : ctx instanceof RuleMessageContext ? ctx.rawPayload() : payloadText(ctx.event.payload);
  input.metadata = { rule_id: ruleId };
  return input;
}

/**
 * A JSONata rule: its result is the rule's output — an object is one record, an array of
 * objects is one record each, nothing (undefined or null) means the rule did not match.
 */
export function compileJsonata(expr: string, filters: string[]): CompiledRule {
  for (const f of filters) {
    const why = validateTopicFilter(f);
    if (why) throw new RuleError('rule.bad_filter', `invalid topic filter ${JSON.stringify(f)}: ${why}`, f);
  }
  const compiled = compileJsonataExpression(expr);
  const matchers = filters.map(compileTopicFilter);
  const evaluateRouted = async (ctx: MessageContext, ruleId: string): Promise<EvalResult> => {
    const result = await evaluateJsonata(compiled, jsonataInput(ctx, ruleId));
    if (result === undefined || result === null) return { matched: false };
    const list = Array.isArray(result) ? result : [result];
    const outputs: OutputRecord[] = [];
    for (const r of list) {
      if (!isObj(r))
        throw new RuleEvalError(
          'rule.jsonata_result',
          `a JSONata rule must give an object or an array of objects, got ${Array.isArray(r) ? 'an array' : typeof r} in the result`,
        );
      outputs.push(r);
    }
    return { matched: true, outputs };
  };
  return {
    filters: [...filters],
    async: true,
    async evaluate(ctx: MessageContext, ruleId: string): Promise<EvalResult> {
      if (!matchers.some((m) => m(ctx.event.topic))) return { matched: false };
      return evaluateRouted(ctx, ruleId);
    },
    evaluateRouted,
  };
}
