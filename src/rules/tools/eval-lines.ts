// The `weir eval` contract (docs/rules.md): one JSON line in — {"sql", "event", "rule_id"} — one
// JSON line out — {"ok": true, "matched", "outputs"} or {"ok": false, "error"}. A bad line is an
// ok:false line, never an exception. Compiled rules are cached, so 10,000 lines with the same SQL
// compile it once.
import { compileSql } from '../compile/compile.js';
import { createMessageContext } from '../compile/context.js';
import { compileJsonata } from '../compile/jsonata.js';
import { FUNCTIONS } from '../functions/all.js';
import type { FunctionRegistry } from '../functions/registry.js';
import { fromJsonBytes, toJsonValue } from '../values/json-out.js';
import type { CompiledRule, RuleEvent } from '../types.js';
import { parseJson } from '../values/json-floats.js';
import { toJson } from '../values/to-json.js';
import { isObj, type Obj } from '../values/value-types.js';

/**
 * Per function registry: the same SQL compiled against other schemas (weir.yaml's after a reload,
 * or none) calls other functions, so a rule compiled for one registry must not serve another.
 */
const cache = new WeakMap<FunctionRegistry, Map<string, CompiledRule>>();

function ruleFor(input: Obj, registry: FunctionRegistry): CompiledRule {
  const key = typeof input.sql === 'string' ? `sql\u0000${input.sql}` : `jsonata\u0000${String(input.jsonata)}\u0000${JSON.stringify(input.filters ?? ['#'])}`;
  let compiled = cache.get(registry);
  if (!compiled) {
    compiled = new Map();
    cache.set(registry, compiled);
  }
  let rule = compiled.get(key);
  if (!rule) {
    if (typeof input.sql === 'string') rule = compileSql(input.sql, registry);
    else if (typeof input.jsonata === 'string') {
      const filters = Array.isArray(input.filters) ? input.filters.map(String) : ['#'];
      rule = compileJsonata(input.jsonata, filters);
    } else throw new Error('the line has no "sql" string');
    if (compiled.size >= 256) compiled.clear();
    compiled.set(key, rule);
  }
  return rule;
}

/** The RuleEvent an eval line describes; fields it leaves out are undefined. */
export function eventFromJson(e: unknown): RuleEvent {
  if (e !== undefined && !isObj(e)) throw new Error('"event" must be an object');
  const src: Obj = e ?? {};
  const event: Record<string, unknown> = {};
  for (const k of Object.keys(src)) {
    if (k === '__proto__') continue;
    event[k] = src[k];
  }
  const payload = fromJsonBytes(src.payload);
  event.payload = payload === undefined ? '' : typeof payload === 'string' || payload instanceof Uint8Array ? payload : toJson(payload);
  event.topic = typeof src.topic === 'string' ? src.topic : '';
  return event as unknown as RuleEvent;
}

function errorLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return JSON.stringify({ ok: false, error: message });
}

/**
 * Evaluates one input (an eval line's object: sql or jsonata, event, rule_id): what `weir eval`
 * prints for it, and the console's Try it. Throws what compiling or evaluating threw. `registry`:
 * the functions, the schema functions bound to weir.yaml's schemas (weir eval -c).
 */
export async function evalInput(input: Obj, registry: FunctionRegistry = FUNCTIONS): Promise<{ matched: boolean; outputs: unknown }> {
  const rule = ruleFor(input, registry);
  const ruleId = typeof input.rule_id === 'string' ? input.rule_id : 'eval';
  const result = await rule.evaluate(createMessageContext(eventFromJson(input.event)), ruleId);
  return { matched: result.matched, outputs: toJsonValue(result.matched ? result.outputs : []) };
}

/** Evaluates one input line and answers the output line (without the newline). */
export async function evalLine(line: string, registry: FunctionRegistry = FUNCTIONS): Promise<string> {
  try {
    // Floats written as 2.0 in the line stay floats, in a payload given as JSON too.
    const input: unknown = parseJson(line);
    if (!isObj(input)) throw new Error('each line must be a JSON object');
    const { matched, outputs } = await evalInput(input, registry);
    // toJson, not JSON.stringify: a float with a whole value prints as 2.0.
    return `{"ok":true,"matched":${matched},"outputs":${toJson(outputs)}}`;
  } catch (err) {
    return errorLine(err);
  }
}
