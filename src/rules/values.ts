// The value model of rule SQL and EMQX's rules for comparing and converting values.
// Erlang terms map to JS as: binary → string (Buffer when it is not text), integer → a whole
// number, float → a number with a fraction or a WholeFloat (floats.ts), true/false → boolean, JSON null → null, undefined (absent) → undefined, map → plain
// object, list → array. Absent values are `undefined`, never `null`: JSON null is a value.
import { RuleEvalError } from './errors.js';
import { float, floatText, numberValue, WholeFloat } from './floats.js';
import { compileTopicFilter } from './topic.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof WholeFloat);
}

export function isBinary(v: unknown): v is string | Buffer {
  return typeof v === 'string' || v instanceof Uint8Array;
}

/** A short type name for error messages. */
export function typeName(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Uint8Array) return 'binary';
  if (v instanceof WholeFloat) return 'float';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'float';
  if (typeof v === 'object') return 'map';
  return typeof v;
}

export function typeError(what: string, ...args: unknown[]): RuleEvalError {
  return new RuleEvalError('rule.type_error', `${what}: bad argument ${args.map(typeName).join(', ')}`);
}

/** EMQX's number(): an integer text, else a float text (`1.5`, `1.0e3`); anything else throws. */
export function parseNumber(s: string): number | WholeFloat {
  const t = s.trim();
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  if (/^[+-]?\d+\.\d+([eE][+-]?\d+)?$/.test(t) || /^[+-]?\d+[eE][+-]?\d+$/.test(t)) return float(Number(t));
  throw new RuleEvalError('rule.type_error', `cannot convert ${JSON.stringify(s)} to a number`);
}

/** Text of a binary: strings as they are, bytes decoded as UTF-8. */
export function text(v: string | Uint8Array): string {
  return typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
}

/** Floats as EMQX prints them: up to 10 decimals, trailing zeros dropped. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n) || !Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1e21 || Math.abs(n) < 1e-10) return String(n);
  let s = n.toFixed(10);
  s = s.replace(/0+$/, '');
  if (s.endsWith('.')) s += '0';
  return s;
}

/** EMQX's str(): any value as text (maps and lists JSON-encoded, absent as "undefined"). */
export function toStr(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return formatNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    default:
      if (v === null) return 'null';
      if (v instanceof Uint8Array) return text(v);
      if (v instanceof WholeFloat) return floatText(v.value);
      return toJson(v);
  }
}

/**
 * JSON text of a map or list, byte strings inside as UTF-8 text and big integers as digits. Flat
 * maps of scalars (most rule outputs) are printed by flatJson; for the rest, the replacer that
 * does the conversions costs a function call per key, so it is used only when a walk finds
 * something for it to do (this is on every Kafka and Pulsar message).
 */
export function toJson(v: unknown): string {
  if (isObj(v)) {
    const flat = flatJson(v);
    if (flat !== undefined) return flat;
  }
  const needs = needsReplacer(v, 0);
  if (needs === FLOATS) return jsonText(v, 0) ?? 'null';
  return JSON.stringify(v, needs === REPLACER ? jsonReplacer : undefined);
}

/**
 * JSON text written here rather than by JSON.stringify, for values holding a WholeFloat, which
 * must print as `2.0` (JSON.stringify would print `2`); bytes and big integers as jsonReplacer
 * does. Undefined: left out of maps, null in lists (as JSON.stringify).
 */
function jsonText(v: unknown, depth: number): string | undefined {
  if (v instanceof WholeFloat) return floatText(v.value);
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return undefined;
  if (typeof v !== 'object' || v === null) return JSON.stringify(jsonReplacer.call(undefined, '', v));
  if (v instanceof Uint8Array) return JSON.stringify(text(v));
  if (depth > 1000) throw new RuleEvalError('rule.limit', 'value nested too deeply to write as JSON');
  if (Array.isArray(v)) return `[${v.map((x) => jsonText(x, depth + 1) ?? 'null').join(',')}]`;
  const o = v as Record<string, unknown>;
  if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(o, jsonReplacer);
  const parts: string[] = [];
  for (const k of Object.keys(o)) {
    const x = jsonText(o[k], depth + 1);
    if (x !== undefined) parts.push(`${quote(k)}:${x}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * A string JSON.stringify leaves as it is: no quote, backslash, control, or surrogate (which it
 * escapes when lone). Written anchored and negated because V8 runs that form over a 900-character
 * string (the 1 KB Pulsar payload's padding) in 0.5 µs where the unanchored positive class took
 * 1.25 µs, once per string of every record written as JSON.
 */
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function quote(s: string): string {
  return PLAIN_STRING.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * The JSON text of a plain map whose values are all scalars (the usual rule output: a few
 * columns), printed without JSON.stringify, whose string escaping in Node 20's V8 costs about
 * 3 ns a character: a 1 KB record took 3-6 µs, the largest single cost of a Kafka or Pulsar
 * message after GC and zlib. Byte-identical to the general path; anything else answers undefined.
 */
function flatJson(o: object): string | undefined {
  const proto = Object.getPrototypeOf(o) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  const rec = o as Record<string, unknown>;
  let out = '{';
  for (const k of Object.keys(rec)) {
    const v = rec[k];
    let json: string;
    switch (typeof v) {
      case 'string':
        json = quote(v);
        break;
      case 'number':
        json = Number.isFinite(v) ? String(v) : 'null';
        break;
      case 'boolean':
        json = v ? 'true' : 'false';
        break;
      case 'bigint':
        json = `"${v.toString()}"`;
        break;
      case 'undefined':
        continue;
      default:
        if (v === null) json = 'null';
        else if (v instanceof Uint8Array) json = quote(text(v));
        else if (v instanceof WholeFloat) json = floatText(v.value);
        else return undefined;
    }
    out += `${out.length > 1 ? ',' : ''}${quote(k)}:${json}`;
  }
  return `${out}}`;
}

const PLAIN = 0;
const REPLACER = 1;
const FLOATS = 2;

/** What writing `v` as JSON takes: JSON.stringify as it is, with jsonReplacer, or jsonText. */
function needsReplacer(v: unknown, depth: number): number {
  if (v instanceof WholeFloat) return FLOATS;
  if (typeof v === 'bigint' || v instanceof Uint8Array) return REPLACER;
  if (v === null || typeof v !== 'object') return PLAIN;
  if (depth > 32) return FLOATS; // deep enough: let jsonText handle whatever is below
  let need = PLAIN;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && need !== FLOATS; i++) need = Math.max(need, needsReplacer(v[i], depth + 1));
    return need;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    need = Math.max(need, needsReplacer(o[k], depth + 1));
    if (need === FLOATS) return need;
  }
  return need;
}

/** JSON.stringify replacer: bytes as text when valid UTF-8, big integers as their digits. */
export function jsonReplacer(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return text(value);
  if (value && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data)) {
    return Buffer.from((value as { data: number[] }).data).toString('utf8');
  }
  return value;
}

const ATOM_RANK = 1;
function rank(v: unknown): number {
  if (typeof v === 'number' || v instanceof WholeFloat) return 0;
  if (typeof v === 'boolean' || v === null || v === undefined) return ATOM_RANK;
  if (isBinary(v)) return 9;
  if (Array.isArray(v)) return v.length === 0 ? 7 : 8;
  return 6; // map
}

function atomText(v: unknown): string {
  return v === undefined ? 'undefined' : v === null ? 'null' : String(v);
}

function compareBinaries(a: string | Uint8Array, b: string | Uint8Array): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const ba = typeof a === 'string' ? Buffer.from(a) : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const bb = typeof b === 'string' ? Buffer.from(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return Buffer.compare(ba, bb);
}

/** Erlang's term order: number < atom < map < [] < list < binary. */
export function compareTerms(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: {
      // Numbers by value: 2 and 2.0 are equal (Erlang's ==).
      const x = numberValue(a) as number;
      const y = numberValue(b) as number;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case ATOM_RANK: {
      const x = atomText(a);
      const y = atomText(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 9:
      return compareBinaries(a as string, b as string);
    case 8: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareTerms(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length < 0 ? -1 : x.length > y.length ? 1 : 0;
    }
    case 6: {
      const x = a as Obj;
      const y = b as Obj;
      const kx = Object.keys(x).sort();
      const ky = Object.keys(y).sort();
      if (kx.length !== ky.length) return kx.length < ky.length ? -1 : 1;
      for (let i = 0; i < kx.length; i++) {
        const c = compareTerms(kx[i], ky[i]);
        if (c !== 0) return c;
      }
      for (const k of kx) {
        const c = compareTerms(x[k], y[k]);
        if (c !== 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** Erlang `==`: structural equality, numbers by value. */
export function termEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'string' && typeof b === 'string') return false;
  if (a instanceof WholeFloat || b instanceof WholeFloat) {
    const x = numberValue(a);
    return x !== undefined && x === numberValue(b);
  }
  // Bytes equal a string with the same UTF-8 bytes; maps and lists compare structurally.
  const objA = typeof a === 'object' && a !== null;
  const objB = typeof b === 'object' && b !== null;
  if (!objA && !objB) return false;
  if (!objA && typeof a !== 'string') return false;
  if (!objB && typeof b !== 'string') return false;
  return compareTerms(a, b) === 0;
}

const topicMatchers = new Map<string, (t: string) => boolean>();

/** `=~`: does the topic on the left match the filter on the right. */
export function topicMatchOp(topic: unknown, filter: unknown): boolean {
  if (!isBinary(topic) || !isBinary(filter)) return false;
  const f = text(filter);
  let m = topicMatchers.get(f);
  if (!m) {
    // Filters are usually constants; the cache is bounded so data-driven filters cannot grow it.
    if (topicMatchers.size > 1000) topicMatchers.clear();
    m = compileTopicFilter(f);
    topicMatchers.set(f, m);
  }
  return m(text(topic));
}

/**
 * A comparison as EMQX does it: undefined compares false with anything but undefined; a number
 * against a string converts the string (throwing when it is not numeric); true/false/null
 * against a string compare as their names; otherwise Erlang's term order.
 */
export function compareOp(op: string, l: unknown, r: unknown): boolean {
  if (l instanceof WholeFloat) l = l.value;
  if (r instanceof WholeFloat) r = r.value;
  if (l === undefined || r === undefined) {
    if (l !== r) return false;
  } else if (typeof l === 'number' && isBinary(r)) {
    r = numberValue(parseNumber(text(r)));
  } else if (isBinary(l) && typeof r === 'number') {
    l = numberValue(parseNumber(text(l)));
  } else if ((typeof l === 'boolean' || l === null) && isBinary(r)) {
    l = atomText(l);
  } else if (isBinary(l) && (typeof r === 'boolean' || r === null)) {
    r = atomText(r);
  }
  if (typeof l === 'number' && typeof r === 'number') {
    switch (op) {
      case '=':
        return l === r;
      case '!=':
      case '<>':
        return l !== r;
      case '<':
        return l < r;
      case '<=':
        return l <= r;
      case '>':
        return l > r;
      case '>=':
        return l >= r;
      default:
        return false;
    }
  }
  switch (op) {
    case '=':
      return termEquals(l, r);
    case '!=':
    case '<>':
      return !termEquals(l, r);
    case '<':
      return compareTerms(l, r) < 0;
    case '<=':
      return compareTerms(l, r) <= 0;
    case '>':
      return compareTerms(l, r) > 0;
    case '>=':
      return compareTerms(l, r) >= 0;
    case '=~':
      return topicMatchOp(l, r);
    default:
      return false;
  }
}
