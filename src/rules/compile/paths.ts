// Walking into values (`a.b`, `a[1]`, `a[1..3]`) and writing into them (`AS a.b[1]`) with EMQX's
// rules: indexes are 1-based and negative from the end, a step into a string that holds JSON
// decodes it, a missing step gives undefined. Writes copy every container on the way, because the
// decoded payload is shared by all rules and must never change.
import { decodeJson } from './context.js';
import { RuleEvalError } from '../errors.js';
import { WholeFloat } from '../values/floats.js';
import type { Scope } from './scope.js';
import { shared } from './shared-closures.js';
import { isBinary, isObj, type Obj } from '../values/value-types.js';

export type Step = (v: unknown) => unknown;

/** A step `.key`, specialised once per key and shared by every rule that reads it. */
export function keyStep(key: string): Step {
  return shared(JSON.stringify(['key', key]), () => makeKeyStep(key));
}

function makeKeyStep(key: string): Step {
  // A key that exists on Object.prototype (constructor, __proto__, toString…) must be looked up
  // as an own property, or a payload could hand out functions and prototypes.
  const inherited = key in Object.prototype;
  return function stepKey(v: unknown): unknown {
    if (typeof v === 'object' && v !== null) {
      if (Array.isArray(v) || v instanceof WholeFloat) return undefined;
      if (v instanceof Uint8Array) return getKey(v, key);
      return inherited ? (Object.hasOwn(v, key) ? (v as Obj)[key] : undefined) : (v as Obj)[key];
    }
    if (typeof v === 'string') return getKey(decodeJson(v), key);
    return undefined;
  };
}

/** `.key` on any value. */
export function getKey(v: unknown, key: string): unknown {
  if (typeof v === 'string' || v instanceof Uint8Array) v = decodeJson(typeof v === 'string' ? v : Buffer.from(v));
  if (isObj(v)) return Object.hasOwn(v, key) ? v[key] : undefined;
  return undefined;
}

/** `[i]`: 1-based, negative from the end, 0 or out of range gives undefined. */
export function getIndex(v: unknown, i: unknown): unknown {
  if (typeof v === 'string' || v instanceof Uint8Array) v = decodeJson(typeof v === 'string' ? v : Buffer.from(v));
  if (!Array.isArray(v) || typeof i !== 'number' || !Number.isInteger(i)) return undefined;
  if (i > 0) return i <= v.length ? v[i - 1] : undefined;
  if (i < 0) return -i <= v.length ? v[v.length + i] : undefined;
  return undefined;
}

/** `[from..to]` on a list: inclusive, 1-based, negative from the end. Not a list is an error. */
export function getSlice(v: unknown, from: number, to: number): unknown[] {
  if (typeof v === 'string') v = decodeJson(v);
  if (!Array.isArray(v)) throw new RuleEvalError('rule.type_error', `range [${from}..${to}] on something that is not an array`);
  if (from === 0 || to === 0) throw new RuleEvalError('rule.bad_index', 'index 0 in a range: indexes start at 1');
  const n = v.length;
  const b = from > 0 ? from : n + from + 1;
  const e = to > 0 ? to : n + to + 1;
  if (b < 1 || b > n + 1 || e - b + 1 < 0) {
    throw new RuleEvalError('rule.bad_index', `range [${from}..${to}] out of bounds for an array of ${n}`);
  }
  return v.slice(b - 1, Math.min(e, n));
}

/**
 * A write step: a key, a constant index (`[0]` is the head: prepend; `[-0]` the tail: append,
 * EMQX's rulesql), or an index computed per message (`AS a[b]`: needs the Scope).
 */
export type PutStep = { readonly key: string } | { readonly index: number | 'head' | 'tail' } | { readonly at: (s: Scope) => unknown };

/** `data` with `val` written at `path`, every container on the way copied (EMQX's nested_put). */
export function putPath(data: unknown, path: readonly PutStep[], i: number, val: unknown, s?: Scope): unknown {
  if (i === path.length) return val;
  const step = path[i] as PutStep;
  if ('key' in step) {
    // A JSON text on the way is read for what lies below the key, but not kept around it
    // (EMQX's general_find decodes it; do_put on what is not a map starts a new one).
    const sub = isObj(data) ? (Object.hasOwn(data, step.key) ? data[step.key] : undefined) : isBinary(data) ? getKey(data, step.key) : undefined;
    const base: Obj = isObj(data) ? { ...data } : {};
    defineKey(base, step.key, putPath(sub, path, i + 1, val, s));
    return base;
  }
  const index = 'at' in step ? step.at(s as Scope) : step.index;
  // EMQX's setnth: not a list becomes [val]; the head and tail add an element; an index that is
  // 0, past either end or not an integer leaves the list as it was.
  if (!Array.isArray(data)) return [putPath(undefined, path, i + 1, val, s)];
  if (index === 'head') return [putPath(undefined, path, i + 1, val, s), ...data];
  if (index === 'tail') return [...data, putPath(undefined, path, i + 1, val, s)];
  if (typeof index !== 'number' || !Number.isInteger(index)) return data;
  const n = data.length;
  const at = index > 0 ? index - 1 : n + index;
  if (index === 0 || at < 0 || at >= n) return data;
  const copy = data.slice();
  copy[at] = putPath(data[at], path, i + 1, val, s);
  return copy;
}

/** Sets a key, even `__proto__`, as a plain own property. */
export function defineKey(o: Obj, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
  else o[key] = v;
}
