// Arbitraries for the rule engine property test: grammar-shaped statements, mutations of them,
// raw strings, and payloads (JSON shaped like the example event's, random JSON, text, bytes).
import fc from 'fast-check';
import { FUNCTIONS } from '../../src/rules/index.js';
import { PAYLOAD } from './helpers.js';

const ROOTS = ['payload', 'clientid', 'topic', 'qos', 'flags', 'pub_props', 'metadata', 'timestamp', 'item', 'x', 'a', 'y'];
const KEYS = ['a', 'b', 'x', 'f', 'n', 't', 'arr', 's', 'k', 'from', 'sensors', 'idx', 'name', 'constructor', '__proto__', "'User-Property'", '"q r"'];
const OPS = ['+', '-', '*', '/', 'div', 'mod', '=', '!=', '<>', '<', '<=', '>', '>=', '=~', 'and', 'or', 'AND', 'OR'];
// Functions that build large values from small numbers are kept, the limits must hold for them.
const FNS = FUNCTIONS.all().filter((f) => !f.async);

const strLit = fc.string({ maxLength: 8 }).map((s) => `'${s.replace(/'/g, "''")}'`);
const literal = fc.oneof(
  fc.integer({ min: -3, max: 12 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((d) => String(d)),
  strLit,
  fc.constantFrom('true', 'false', "'t/#'", "'a/+'", "'%Y-%m-%d'", "'second'", '\'{"a":1}\'', "'[1,2]'", "'~p'", "'(a|b)+'", "'leading'", "'sha256'"),
);
const segment = fc.oneof(
  fc.constantFrom(...KEYS).map((k) => `.${k}`),
  fc.integer({ min: -4, max: 4 }).map((i) => `[${i}]`),
  fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -3, max: 3 })).map(([a, b]) => `[${a}..${b}]`),
);
const path = fc.tuple(fc.constantFrom(...ROOTS), fc.array(segment, { maxLength: 3 })).map(([r, s]) => r + s.join(''));

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    literal,
    path,
    fc.tuple(tie('expr'), fc.constantFrom(...OPS), tie('expr')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(tie('expr'), fc.constantFrom(...OPS), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`),
    tie('expr').map((e) => `NOT ${e}`),
    tie('expr').map((e) => `-${e}`),
    // Mostly the right number of arguments, so that calls compile and the functions run.
    fc.tuple(fc.constantFrom(...FNS), fc.array(tie('expr'), { maxLength: 6 }), fc.nat(9)).map(([f, args, wrong]) => {
      const n = wrong === 0 ? args.length : Math.max(f.minArgs, Math.min(args.length, f.maxArgs));
      while (args.length < n) args.push('1');
      return `${f.name}(${args.slice(0, n).join(', ')})`;
    }),
    fc
      .tuple(tie('expr'), fc.array(tie('expr'), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([e, l, neg]) => `${e} ${neg ? 'NOT IN' : 'IN'} (${l.join(', ')})`),
    fc.array(tie('expr'), { maxLength: 3 }).map((l) => `[${l.join(', ')}]`),
    fc
      .tuple(fc.option(tie('expr'), { nil: undefined }), tie('expr'), tie('expr'), fc.option(tie('expr'), { nil: undefined }))
      .map(([subject, w, t, e]) => `CASE ${subject ?? ''} WHEN ${w} THEN ${t}${e ? ` ELSE ${e}` : ''} END`),
  ),
}));

const alias = fc.oneof(fc.constantFrom('x', 'y', 'a.b', 'c[1]', 'payload.z', 'clientid', '__proto__', 'item'), fc.constant(''));
const field = fc.oneof({ weight: 1, arbitrary: fc.constant('*') }, { weight: 6, arbitrary: fc.tuple(expr, alias).map(([e, a]) => (a ? `${e} AS ${a}` : e)) });
const fields = fc.array(field, { minLength: 1, maxLength: 4 }).map((f) => f.join(', '));
const from = fc.constantFrom('"t/#"', '"#"', '"t/+/b", "x"', '"$share/g/t/#"');
const where = fc.option(expr, { nil: undefined }).map((w) => (w ? ` WHERE ${w}` : ''));

const select = fc.tuple(fields, from, where).map(([f, fr, w]) => `SELECT ${f} FROM ${fr}${w}`);
const foreach = fc
  .tuple(
    fc.constantFrom('payload.arr', 'payload.sensors', 'payload.a', '[1, 2, 3]', "split(topic, '/')"),
    fc.constantFrom('', ' AS s', ' AS item'),
    fc.option(fields, { nil: undefined }),
    fc.option(expr, { nil: undefined }),
    from,
    where,
  )
  .map(([coll, as, d, inc, fr, w]) => `FOREACH ${coll}${as}${d ? ` DO ${d}` : ''}${inc ? ` INCASE ${inc}` : ''} FROM ${fr}${w}`);
export const statement = fc.oneof({ weight: 3, arbitrary: select }, { weight: 1, arbitrary: foreach });

const ALPHABET = ` ,.()[]*+-/=<>!~'"abcdefxyz0129_\n#$%\\`;
/** Edits a statement: deletes, inserts or duplicates a slice at random places. */
export const mutated = fc
  .tuple(statement, fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.nat(ALPHABET.length - 1), fc.nat(2)), { minLength: 1, maxLength: 4 }))
  .map(([s, edits]) => {
    let out = s;
    for (const [pos, len, ch, kind] of edits) {
      const at = out.length === 0 ? 0 : pos % out.length;
      if (kind === 0) out = out.slice(0, at) + out.slice(at + len + 1);
      else if (kind === 1) out = out.slice(0, at) + (ALPHABET[ch] as string) + out.slice(at);
      else out = out.slice(0, at) + out.slice(at, at + len + 2) + out.slice(at);
    }
    return out;
  });
export const anySql = fc.oneof({ weight: 4, arbitrary: statement }, { weight: 4, arbitrary: mutated }, { weight: 1, arbitrary: fc.string({ maxLength: 60 }) });

export const payload = fc.oneof(
  { weight: 3, arbitrary: fc.constant(JSON.stringify(PAYLOAD)) },
  { weight: 3, arbitrary: fc.json({ maxDepth: 3 }) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        a: fc.jsonValue({ maxDepth: 2 }),
        arr: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 }),
        x: fc.oneof(fc.integer(), fc.string()),
        s: fc.json({ maxDepth: 1 }),
      })
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)) },
);
