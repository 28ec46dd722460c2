// EMQX-style `${path}` templates, used by sinks to map output records to columns, keys and
// topics. `${a.b}` alone gives the raw value (its type kept, undefined when missing); inside
// other text values are rendered (maps and lists as JSON, missing as '').
//
// Where a name is read from (docs/rules.md, "Templates"): a name the rule's output has (every
// field a SQL rule selects is written, even when its value is missing) is read from the output
// only, so a selected `seq` missing from the payload is NULL; a name the output lacks may fall
// back to the event, and then only to a documented event field (event-fields.ts:
// `${clientid}`, `${topic}`, `${payload.x}`…). Nothing else an event object carries is data: an
// earlier fallback to any own property stored weir's internal event counter as a selected `seq`.
import { parseJson } from '../values/json-floats.js';
import { decodeJson, payloadText } from './context.js';
import { isEventField } from './event-fields.js';
import { getIndex, getKey } from './paths.js';
import type { OutputRecord, RuleEvent } from '../types.js';
import { shared } from './shared-closures.js';
import { toStr } from '../values/to-str.js';

type PathStep = string | number;
type Part = string | { readonly path: readonly PathStep[]; readonly text: string };

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** `a.b[2].c` → ['a', 'b', 2, 'c']. */
function parsePath(text: string): PathStep[] {
  const steps: PathStep[] = [];
  for (const part of text.trim().split('.')) {
    const m = /^([^[\]]*)((?:\[-?\d+\])*)$/.exec(part);
    if (!m) {
      steps.push(part);
      continue;
    }
    if (m[1]) steps.push(m[1]);
    for (const idx of (m[2] ?? '').matchAll(/\[(-?\d+)\]/g)) steps.push(Number(idx[1]));
  }
  return steps;
}

function parseTemplate(template: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    const at = m.index ?? 0;
    if (at > last) parts.push(template.slice(last, at));
    parts.push({ path: parsePath(m[1] ?? ''), text: (m[1] ?? '').trim() });
    last = at + m[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

/** The paths a template reads, as written (`payload.x`). */
export function templatePaths(template: string): string[] {
  return parseTemplate(template).flatMap((p) => (typeof p === 'string' ? [] : [p.text]));
}

/** The name each placeholder starts with (`payload` of `${payload.x}`), in order. */
export function templateRoots(template: string): string[] {
  return parseTemplate(template).flatMap((p) => (typeof p !== 'string' && typeof p.path[0] === 'string' && p.path[0] !== '' ? [p.path[0]] : []));
}

/**
 * What makes a template unreadable, for `weir check`: a `${` with no `}` before the next `${` or
 * the end (rendered, it would store its own text, `${sensr`), or an empty `${}`. `at` is the
 * offset of the `${`.
 */
export function templateSyntaxProblem(template: string): { at: number; message: string } | undefined {
  for (let at = template.indexOf('${'); at >= 0; at = template.indexOf('${', at + 2)) {
    const close = template.indexOf('}', at + 2);
    const next = template.indexOf('${', at + 2);
    if (close < 0 || (next >= 0 && next < close)) {
      return { at, message: `unterminated \${ in template ${JSON.stringify(template)}: close it with }` };
    }
    if (template.slice(at + 2, close).trim() === '') return { at, message: `empty \${} in template ${JSON.stringify(template)}` };
  }
  return undefined;
}

/**
 * JSON strings met on the way (the raw payload of a SELECT * record), decoded once per record
 * and key rather than once per placeholder.
 */
const decodedStrings = new WeakMap<object, Map<PathStep, unknown>>();

function walk(v: unknown, path: readonly PathStep[], from: number): unknown {
  for (let i = from; i < path.length && v !== undefined; i++) {
    const step = path[i] as PathStep;
    const parent = v;
    v = typeof step === 'number' ? getIndex(v, step) : getKey(v, step);
    if (typeof v === 'string' && i + 1 < path.length && typeof parent === 'object' && parent !== null) {
      let cache = decodedStrings.get(parent);
      if (!cache) {
        cache = new Map();
        decodedStrings.set(parent, cache);
      }
      if (!cache.has(step)) cache.set(step, decodeJson(v));
      v = cache.get(step);
    }
  }
  return v;
}

const decodedPayloads = new WeakMap<RuleEvent, unknown>();

function eventValue(event: RuleEvent, path: readonly PathStep[]): unknown {
  const root = path[0];
  if (typeof root !== 'string') return undefined;
  if (root === 'payload') {
    if (path.length === 1) return payloadText(event.payload);
    let decoded = decodedPayloads.get(event);
    if (decoded === undefined) {
      const raw = payloadText(event.payload);
      try {
        decoded = parseJson(typeof raw === 'string' ? raw : raw.toString('utf8'));
      } catch {
        decoded = null; // not JSON: every payload.x is missing
      }
      decodedPayloads.set(event, decoded);
    }
    return walk(decoded, path, 1);
  }
  // Only the documented fields, read by name (some are getters: core/ingest/event.ts makes `id` only
  // when it is read); never whatever else the object happens to hold.
  if (!isEventField(root)) return undefined;
  return walk((event as unknown as Record<string, unknown>)[root], path, 1);
}

function lookup(path: readonly PathStep[], record: OutputRecord, event: RuleEvent | undefined): unknown {
  const root = path[0];
  if (root === undefined) return undefined;
  // A name the rule wrote (even as undefined: a selected field that was missing) is the rule's.
  if (event === undefined || (typeof root === 'string' && Object.hasOwn(record, root))) return walk(record, path, 0);
  return eventValue(event, path);
}

function render(v: unknown): string {
  return v === undefined ? '' : toStr(v);
}

/** Compiles a template once (once per process for each text); the result renders it for one record (and its event). */
export function compileTemplate(template: string): (record: OutputRecord, event?: RuleEvent) => unknown {
  return shared(JSON.stringify(['template', template]), () => makeTemplate(template));
}

function makeTemplate(template: string): (record: OutputRecord, event?: RuleEvent) => unknown {
  const parts = parseTemplate(template);
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only !== undefined && typeof only !== 'string') {
    const path = only.path;
    return (record, event) => lookup(path, record, event);
  }
  if (parts.every((p) => typeof p === 'string')) return () => template;
  return (record, event) => {
    let out = '';
    for (const p of parts) out += typeof p === 'string' ? p : render(lookup(p.path, record, event));
    return out;
  };
}
