// Rule values as JSON text: byte strings as UTF-8 text, big integers as digits, whole floats as
// `2.0`. Written for weir eval, Kafka and Pulsar messages, str() of a map or list, and json_encode.
import { RuleEvalError } from '../errors.js';
import { floatText, WholeFloat } from './floats.js';
import { isObj, text } from './value-types.js';

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
