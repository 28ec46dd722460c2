// Expressions → closures over a Scope. Names are resolved and function arity checked here, at
// compile time; constant sub-expressions are folded; the closures themselves are small and
// monomorphic so that V8 can inline them on the hot path.
import type { Expr, Segment } from '../sql/ast.js';
import { asEvalError, RuleError, RuleEvalError } from '../errors.js';
import { eventReader, isEventField, type Ev } from './event-fields.js';
import type { FunctionRegistry, FunctionSpec } from '../functions/registry.js';
import { UNSUPPORTED } from '../functions/unsupported.js';
import { LIMITS } from '../limits.js';
import { ARITH, negate } from '../values/ops.js';
import { getIndex, getSlice, keyStep } from './paths.js';
import { PendingCall, type Scope } from './scope.js';
import { shared } from './shared-closures.js';
import { compareOp } from '../values/compare-op.js';
import { termEquals } from '../values/term-order.js';

export interface CompileEnv {
  readonly sql: string;
  readonly registry: FunctionRegistry;
  /** The slot of a name written by an alias or the FOREACH item, if any. */
  slotOf(name: string): number | undefined;
  /** Set when the rule calls an asynchronous function (jsonata). */
  usesAsync: boolean;
  /** `payload.a.b` paths the rule reads, for the core and the docs. */
  readonly payloadPaths: Set<string>;
}

const CONST = Symbol('const');
type ConstEv = Ev & { [CONST]?: { value: unknown } };

function constant(value: unknown): Ev {
  const ev: ConstEv = () => value;
  ev[CONST] = { value };
  return ev;
}

function constOf(ev: Ev): { value: unknown } | undefined {
  return (ev as ConstEv)[CONST];
}

/** Folds `ev` to a constant when all its inputs are constants and it evaluates without error. */
function fold(ev: Ev, inputs: readonly Ev[]): Ev {
  if (!inputs.every((i) => constOf(i))) return ev;
  // A fold that fails is thrown away, so its error needs no stack trace (the costly part).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return constant(ev(undefined as unknown as Scope));
  } catch {
    return ev; // fails at evaluation, per message, as it would unfolded
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function compileExpr(e: Expr, env: CompileEnv): Ev {
  switch (e.kind) {
    case 'literal':
      return constant(e.value);
    case 'path':
      // `"sensor_1"` where no such name exists stays the string EMQX's documentation means by it
      // (`WHERE payload.name = "sensor_1"`); `"topic"` reads the topic, as rulesql parses it.
      if (e.quoted && e.segments.length === 0 && !isEventField(e.root) && env.slotOf(e.root) === undefined) return constant(e.root);
      return compilePath(e.root, e.segments, env);
    case 'access':
      return withSteps(compileExpr(e.target, env), e.segments, env);
    case 'array': {
      const items = e.items.map((i) => compileExpr(i, env));
      return fold((s) => {
        const out = new Array(items.length);
        for (let i = 0; i < items.length; i++) out[i] = (items[i] as Ev)(s);
        return out;
      }, items);
    }
    case 'range': {
      const n = e.to - e.from + 1;
      if (n > LIMITS.maxArrayLength) {
        throw new RuleError('rule.limit', `range of ${n} elements, more than ${LIMITS.maxArrayLength}`, env.sql, { range: e.range });
      }
      const list: number[] = [];
      for (let i = e.from; i <= e.to; i++) list.push(i);
      return constant(list);
    }
    case 'unary': {
      const a = compileExpr(e.arg, env);
      if (e.op === '+') return a;
      if (e.op === '-') return fold((s) => negate(a(s)), [a]);
      // NOT of anything but a boolean is false (EMQX), not an error.
      return fold(
        (s) => {
          const v = a(s);
          return typeof v === 'boolean' ? !v : false;
        },
        [a],
      );
    }
    case 'binary':
      return compileBinary(e.op, compileExpr(e.left, env), compileExpr(e.right, env));
    case 'logic': {
      const l = compileExpr(e.left, env);
      const r = compileExpr(e.right, env);
      return e.op === 'and' ? fold((s) => l(s) === true && r(s) === true, [l, r]) : fold((s) => l(s) === true || r(s) === true, [l, r]);
    }
    case 'in': {
      const a = compileExpr(e.arg, env);
      const list = e.list.map((i) => compileExpr(i, env));
      const neg = e.negated;
      return fold(
        (s) => {
          const v = a(s);
          for (let i = 0; i < list.length; i++) {
            if (termEquals(v, (list[i] as Ev)(s))) return !neg;
          }
          return neg;
        },
        [a, ...list],
      );
    }
    case 'case':
      return compileCase(e, env);
    case 'call':
      return compileCall(e, env);
  }
}

function compileBinary(op: string, l: Ev, r: Ev): Ev {
  let ev: Ev;
  switch (op) {
    case '+':
      ev = (s) => {
        const x = l(s);
        const y = r(s);
        // Fast path: two integers, or a sum with a fraction (a float either way); the rest —
        // a float sum that comes out whole, strings, overflow — as ops.ts defines it.
        if (typeof x === 'number' && typeof y === 'number') {
          const r = x + y;
          if (Number.isFinite(r) && (!Number.isInteger(r) || (Number.isInteger(x) && Number.isInteger(y)))) return r;
        }
        return ARITH['+']!(x, y);
      };
      break;
    case '>':
      ev = (s) => {
        const x = l(s);
        const y = r(s);
        return typeof x === 'number' && typeof y === 'number' ? x > y : compareOp('>', x, y);
      };
      break;
    case '<':
      ev = (s) => {
        const x = l(s);
        const y = r(s);
        return typeof x === 'number' && typeof y === 'number' ? x < y : compareOp('<', x, y);
      };
      break;
    case '=':
      ev = (s) => {
        const x = l(s);
        const y = r(s);
        return typeof x === 'string' && typeof y === 'string' ? x === y : compareOp('=', x, y);
      };
      break;
    default: {
      const arith = ARITH[op];
      if (arith) ev = (s) => arith(l(s), r(s));
      else ev = (s) => compareOp(op, l(s), r(s));
    }
  }
  return fold(ev, [l, r]);
}

function compileCase(e: Extract<Expr, { kind: 'case' }>, env: CompileEnv): Ev {
  const whens = e.whens.map((w) => ({ when: compileExpr(w.when, env), then: compileExpr(w.then, env) }));
  const otherwise = e.otherwise ? compileExpr(e.otherwise, env) : () => undefined;
  if (e.subject) {
    // Simple CASE: the first WHEN whose value equals the subject.
    const subject = compileExpr(e.subject, env);
    return (s) => {
      const v = subject(s);
      for (const w of whens) if (termEquals(v, w.when(s))) return w.then(s);
      return otherwise(s);
    };
  }
  return (s) => {
    for (const w of whens) if (w.when(s) === true) return w.then(s);
    return otherwise(s);
  };
}

/** A variable (event field, alias or FOREACH item) followed by its path steps. */
function compilePath(root: string, segments: readonly Segment[], env: CompileEnv): Ev {
  const withPath = segments.length > 0;
  // In `payload.a[b]` the index names a path in the payload, as EMQX reads a variable index
  // from the data the path walks (`payload.a[b[1].c]` reads payload.b[1].c).
  if (root === 'payload') segments = segments.map(inPayload);
  if (root === 'payload' && withPath) env.payloadPaths.add(pathText(root, segments));
  const base = eventReader(root, withPath);
  const slot = env.slotOf(root);
  // An event field or the payload read through keys only is the same closure in every rule.
  if (slot === undefined && segments.every((seg) => seg.kind === 'key')) {
    return shared(JSON.stringify(['path', root, ...segments.map((seg) => seg.kind === 'key' && seg.name)]), () => withSteps(base, segments, env));
  }
  const read: Ev =
    slot === undefined
      ? base
      : (s) => {
          const v = s.slots[slot];
          return v !== undefined ? v : base(s);
        };
  return withSteps(read, segments, env);
}

function inPayload(seg: Segment): Segment {
  if (seg.kind !== 'index' || seg.index.kind !== 'path' || seg.index.quoted) return seg;
  const i = seg.index;
  return { kind: 'index', index: { ...i, root: 'payload', segments: [{ kind: 'key', name: i.root }, ...i.segments] } };
}

function pathText(root: string, segments: readonly Segment[]): string {
  let t = root;
  for (const seg of segments) {
    if (seg.kind === 'key') t += `.${seg.name}`;
    else if (seg.kind === 'slice') t += `[${seg.from}..${seg.to}]`;
    else t += seg.index.kind === 'literal' ? `[${String(seg.index.value)}]` : '[*]';
  }
  return t;
}

function withSteps(read: Ev, segments: readonly Segment[], env: CompileEnv): Ev {
  if (segments.length === 0) return read;
  const steps: ((v: unknown, s: Scope) => unknown)[] = segments.map((seg): ((v: unknown, s: Scope) => unknown) => {
    if (seg.kind === 'key') return keyStep(seg.name);
    if (seg.kind === 'slice') {
      const { from, to } = seg;
      return (v) => getSlice(v, from, to);
    }
    const idx = compileExpr(seg.index, env);
    const c = constOf(idx);
    if (c) {
      const i = c.value;
      return (v) => getIndex(v, i);
    }
    return (v, s) => getIndex(v, idx(s));
  });
  // A range over what is missing fails (EMQX's range_get on undefined), so a path with one
  // runs every step; the others stop at the first undefined.
  if (segments.some((seg) => seg.kind === 'slice')) {
    return (s) => {
      let v = read(s);
      for (let i = 0; i < steps.length; i++) v = steps[i]!(v, s);
      return v;
    };
  }
  if (steps.length === 1) {
    const a = steps[0]!;
    return (s) => a(read(s), s);
  }
  if (steps.length === 2) {
    const a = steps[0]!;
    const b = steps[1]!;
    return (s) => {
      const v = a(read(s), s);
      return v === undefined ? undefined : b(v, s);
    };
  }
  return (s) => {
    let v = read(s);
    for (let i = 0; i < steps.length && v !== undefined; i++) v = steps[i]!(v, s);
    return v;
  };
}

function compileCall(e: Extract<Expr, { kind: 'call' }>, env: CompileEnv): Ev {
  const spec = env.registry.get(e.name);
  if (!spec) {
    const why = Object.hasOwn(UNSUPPORTED, e.name.toLowerCase()) ? UNSUPPORTED[e.name.toLowerCase()] : undefined;
    if (why) throw new RuleError('rule.unsupported_function', `${e.name}() is not supported by weir: ${why}`, env.sql, { range: e.nameRange });
    throw new RuleError('rule.unknown_function', `unknown function ${e.name}()`, env.sql, { range: e.nameRange, expected: 'a built-in function name' });
  }
  const n = e.args.length;
  if (n < spec.minArgs || n > spec.maxArgs) {
    const want =
      spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : spec.maxArgs === Infinity ? `at least ${spec.minArgs}` : `${spec.minArgs} to ${spec.maxArgs}`;
    throw new RuleError('rule.arity', `${spec.name}() takes ${want} argument${want === '1' ? '' : 's'}, not ${n}: ${spec.signature}`, env.sql, {
      range: e.range,
      expected: spec.signature,
    });
  }
  const args = e.args.map((a) => compileExpr(a, env));
  checkLiteralArgs(spec, e.args, args, env);
  if (spec.async) {
    env.usesAsync = true;
    return asyncCall(spec, args);
  }
  const f = spec.fn;
  let ev: Ev;
  if (spec.scoped) {
    ev = (s) => {
      const vals = new Array(args.length);
      for (let i = 0; i < args.length; i++) vals[i] = (args[i] as Ev)(s);
      return f(s, ...vals);
    };
  } else if (n === 0) {
    ev = () => f();
  } else if (n === 1) {
    const a = args[0]!;
    ev = (s) => f(a(s));
  } else if (n === 2) {
    const a = args[0]!;
    const b = args[1]!;
    ev = (s) => f(a(s), b(s));
  } else if (n === 3) {
    const a = args[0]!;
    const b = args[1]!;
    const c = args[2]!;
    ev = (s) => f(a(s), b(s), c(s));
  } else {
    ev = (s) => {
      const vals = new Array(args.length);
      for (let i = 0; i < args.length; i++) vals[i] = (args[i] as Ev)(s);
      return f(...vals);
    };
  }
  return spec.volatile || spec.scoped ? ev : fold(ev, args);
}

/** Runs the function's checks of arguments written as literals: a failure is a compile error there. */
function checkLiteralArgs(spec: FunctionSpec, exprs: readonly Expr[], args: readonly Ev[], env: CompileEnv): void {
  for (const [at, check] of Object.entries(spec.literalArgs)) {
    const i = Number(at);
    const c = args[i] === undefined ? undefined : constOf(args[i]);
    if (!c) continue;
    try {
      check(c.value);
    } catch (err) {
      if (!(err instanceof RuleEvalError)) throw err;
      throw new RuleError(err.code, err.message, env.sql, { range: (exprs[i] as Expr).range, cause: err });
    }
  }
}

/**
 * An asynchronous call (jsonata()). Evaluation stays synchronous: the first time the k-th such
 * call of an evaluation is reached it throws a PendingCall; the rule awaits it and re-runs, and
 * the re-run finds the settled result. Earlier calls are replayed from the cache, so a rule with
 * m async calls runs m+1 times, synchronously each time.
 */
function asyncCall(spec: FunctionSpec, args: Ev[]): Ev {
  const f = spec.fn;
  return (s) => {
    const vals = new Array(args.length);
    for (let i = 0; i < args.length; i++) vals[i] = (args[i] as Ev)(s);
    const settled = s.settled;
    if (!settled) throw new PendingCall(Promise.resolve());
    const k = settled.next++;
    const hit = settled.results[k];
    if (hit && hit.args.length === vals.length && hit.args.every((a, i) => termEquals(a, vals[i]))) {
      if (hit.error !== undefined) throw hit.error;
      return hit.value;
    }
    settled.results.length = k;
    const entry = { args: vals, value: undefined as unknown, error: undefined as unknown };
    const p = Promise.resolve()
      .then(() => f(...vals))
      .then(
        (v) => {
          entry.value = v;
        },
        (err) => {
          entry.error = asEvalError(err);
        },
      )
      .then(() => {
        settled.results.push(entry);
      });
    throw new PendingCall(p);
  };
}
