// The content oracle's own view of values (test/e2e/oracle.test.ts): a JSON reader that keeps
// "written as a float" (2.0, 1e3), and the template renderer and PostgreSQL parameter text that
// the documented semantics give. Written apart from src/rules/ and src/sinks/ on purpose: the
// oracle must not share the runtime's record, template or column path, or it would agree with
// the runtime's mistakes. What it follows, stated once:
//
// - `${root.a[1]}`: if the rule's output record has the key `root` (even with an absent value),
//   the value is read from the record only; otherwise `root` may be one of the documented EMQX
//   event fields (FALLBACK_FIELDS), read from the message; anything else is absent. Indexes are
//   1-based and negative from the end, 0 is absent; a step into a string decodes it as JSON.
// - A template that is one `${…}` alone gives the raw value; in other text, values are rendered:
//   strings as they are, integers as digits, floats as EMQX prints them (up to 10 decimals,
//   trailing zeros dropped; a whole float as `2.0`), maps and lists as JSON, null as `null`,
//   absent as ''.
// - A value becomes a PostgreSQL parameter as docs/rules.md and statements.ts's doc say: absent or
//   null → NULL, a number → its JS text (a number into a timestamptz column: epoch milliseconds
//   → ISO text), booleans `true`/`false`, maps and lists → JSON text (as JSON.stringify writes
//   them: a whole float as `2`); the server then converts the text to the column's type.

/** A number written with a fraction or an exponent whose value is whole (`2.0`, `1e3`): a float. */
export class Flt {
  constructor(readonly value: number) {}
}

/** A JSON value as the oracle holds it: objects have no prototype, so every key is an own key. */
export type Val = undefined | null | boolean | number | string | Flt | Val[] | { [k: string]: Val };

export function isMap(v: Val): v is { [k: string]: Val } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Flt);
}

/**
 * JSON text → Val; throws on what is not JSON (one value, whitespace around it), as JSON.parse
 * would. test/rules/conformance/cases.ts's parseKeepingFloats keeps floats too but reads
 * leniently (trailing text is ignored), and the oracle must tell JSON from not JSON.
 */
export function readJson(text: string): Val {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw new SyntaxError(`not JSON at ${i}`);
  };
  const value = (depth: number): Val => {
    if (depth > 5000) fail();
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: { [k: string]: Val } = Object.create(null) as { [k: string]: Val };
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const k = str();
        ws();
        if (text[i++] !== ':') fail();
        out[k] = value(depth + 1);
        ws();
        const e = text[i++];
        if (e === '}') return out;
        if (e !== ',') fail();
      }
    }
    if (c === '[') {
      i++;
      const out: Val[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        const e = text[i++];
        if (e === ']') return out;
        if (e !== ',') fail();
      }
    }
    if (c === '"') return str();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail();
    i += m[0].length;
    const n = Number(m[0]);
    return (m[1] !== undefined || m[2] !== undefined) && Number.isInteger(n) ? new Flt(n) : n;
  };
  const str = (): string => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/.exec(text.slice(i));
    if (!m) return fail();
    i += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail();
  return v;
}

/** JSON text; `dotFloats`: a whole float as `2.0` (str() of a map) or as `2` (JSON.stringify). */
export function writeJson(v: Val, dotFloats: boolean): string | undefined {
  if (v === undefined) return undefined;
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (v instanceof Flt) return dotFloats ? floatText(v.value) : String(v.value);
  if (Array.isArray(v)) return `[${v.map((x) => writeJson(x, dotFloats) ?? 'null').join(',')}]`;
  const parts: string[] = [];
  for (const k of Object.keys(v)) {
    const x = writeJson(v[k], dotFloats);
    if (x !== undefined) parts.push(`${JSON.stringify(k)}:${x}`);
  }
  return `{${parts.join(',')}}`;
}

/** A whole float as Erlang prints it: `2.0`, `1.0e21` is written `1e+21` by JS and kept so. */
function floatText(n: number): string {
  const s = String(n);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** EMQX's float printing in str(): up to 10 decimals, trailing zeros dropped. */
function numberText(n: number): string {
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 1e21 || Math.abs(n) < 1e-10) return String(n);
  const s = n.toFixed(10).replace(/0+$/, '');
  return s.endsWith('.') ? `${s}0` : s;
}

/** A value inside template text. */
export function renderText(v: Val): string {
  if (v === undefined) return '';
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return numberText(v);
  if (v instanceof Flt) return floatText(v.value);
  return writeJson(v, true)!;
}

export type Step = { readonly key: string } | { readonly index: number };
export interface Ref {
  readonly root: string;
  readonly steps: readonly Step[];
}
export type Template = ReadonlyArray<string | Ref>;

export function templateText(t: Template): string {
  return t.map((p) => (typeof p === 'string' ? p : `\${${p.root}${p.steps.map((s) => ('key' in s ? `.${s.key}` : `[${s.index}]`)).join('')}}`)).join('');
}

/**
 * The documented EMQX event fields a template may fall back to (issue 28's list; `metadata` is not
 * one of them). Written here again rather than imported from src/rules/compile/event-fields.ts: the
 * oracle must not take the runtime's word for what the runtime may read.
 */
export const FALLBACK_FIELDS = [
  'id',
  'clientid',
  'username',
  'payload',
  'peerhost',
  'topic',
  'qos',
  'flags',
  'pub_props',
  'timestamp',
  'publish_received_at',
  'node',
  'event',
] as const;

/** What the oracle knows of a message's event fields (id and time as sentinels: see oracle.test.ts). */
export type EventView = Readonly<Record<(typeof FALLBACK_FIELDS)[number], Val>>;

function decode(s: string): Val {
  try {
    return readJson(s);
  } catch {
    return undefined;
  }
}

function step(v: Val, s: Step): Val {
  if (typeof v === 'string') v = decode(v);
  if ('key' in s) return isMap(v) && Object.hasOwn(v, s.key) ? v[s.key] : undefined;
  if (!Array.isArray(v)) return undefined;
  const i = s.index;
  if (i > 0) return i <= v.length ? v[i - 1] : undefined;
  if (i < 0) return -i <= v.length ? v[v.length + i] : undefined;
  return undefined;
}

/** A reference's value for one output record of one message. */
export function lookup(ref: Ref, record: { [k: string]: Val }, event: EventView): Val {
  let v: Val;
  if (Object.hasOwn(record, ref.root)) v = record[ref.root];
  else if ((FALLBACK_FIELDS as readonly string[]).includes(ref.root)) {
    v = event[ref.root as (typeof FALLBACK_FIELDS)[number]];
    // A path under the event's payload reads the decoded payload (a string step decodes anyway).
  } else v = undefined;
  for (const s of ref.steps) {
    if (v === undefined) break;
    v = step(v, s);
  }
  return v;
}

/** A template's value: the raw value of a lone `${…}`, else the rendered text. */
export function renderTemplate(t: Template, record: { [k: string]: Val }, event: EventView): Val {
  const only = t.length === 1 ? t[0] : undefined;
  if (only !== undefined && typeof only !== 'string') return lookup(only, record, event);
  return t.map((p) => (typeof p === 'string' ? p : renderText(lookup(p, record, event)))).join('');
}

export type ColType = 'text' | 'jsonb' | 'bigint' | 'double precision' | 'numeric' | 'boolean' | 'timestamptz';

/** The parameter text a value becomes for a column: null for NULL; `{ client }` when weir cannot even send it. */
export function paramText(v: Val, type: ColType): string | null | { client: string } {
  if (v === undefined || v === null) return null;
  if (v instanceof Flt) v = v.value;
  if (typeof v === 'number') {
    if (type !== 'timestamptz') return String(v);
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? { client: `${v} ms is outside what a timestamp can hold` } : d.toISOString();
  }
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return v;
  return writeJson(v, false)!;
}
