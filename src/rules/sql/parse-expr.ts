// Expressions: a Pratt loop over one binding-power table, prefix forms by recursive descent.
// Precedence, loosest first: OR < AND < NOT < comparison and IN < + - < * / div mod < unary - +.
import type { BinaryOp, Expr, Segment } from './ast.js';
import type { Cursor } from './cursor.js';
import { float, isNumber } from '../values/floats.js';
import type { Token } from './lexer.js';
import { negate } from '../values/ops.js';

/** Words that cannot start a path: the clause and operator keywords. */
export const RESERVED = new Set([
  'SELECT',
  'FROM',
  'WHERE',
  'AS',
  'AND',
  'OR',
  'NOT',
  'IN',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'END',
  'FOREACH',
  'DO',
  'INCASE',
  'DIV',
  'MOD',
  'TRUE',
  'FALSE',
]);

const BP_OR = 10;
const BP_AND = 20;
const BP_NOT = 30;
const BP_COMPARE = 40;
const BP_ADD = 50;
const BP_MUL = 60;
const BP_UNARY = 70;

const COMPARE_OPS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=', '=~']);

interface Infix {
  readonly bp: number;
  readonly kind: 'binary' | 'logic' | 'in';
  readonly op: string;
  /** Tokens the operator spans (`NOT IN` is two). */
  readonly width: number;
}

function infixAt(c: Cursor): Infix | undefined {
  const t = c.peek();
  if (t.kind === 'op') {
    if (COMPARE_OPS.has(t.text)) return { bp: BP_COMPARE, kind: 'binary', op: t.text, width: 1 };
    if (t.text === '+' || t.text === '-') return { bp: BP_ADD, kind: 'binary', op: t.text, width: 1 };
    if (t.text === '*' || t.text === '/') return { bp: BP_MUL, kind: 'binary', op: t.text, width: 1 };
    return undefined;
  }
  if (t.kind !== 'ident') return undefined;
  if (c.isKeyword('OR')) return { bp: BP_OR, kind: 'logic', op: 'or', width: 1 };
  if (c.isKeyword('AND')) return { bp: BP_AND, kind: 'logic', op: 'and', width: 1 };
  if (c.isKeyword('DIV')) return { bp: BP_MUL, kind: 'binary', op: 'div', width: 1 };
  if (c.isKeyword('MOD')) return { bp: BP_MUL, kind: 'binary', op: 'mod', width: 1 };
  if (c.isKeyword('IN')) return { bp: BP_COMPARE, kind: 'in', op: 'in', width: 1 };
  if (c.isKeyword('NOT') && c.isKeyword('IN', 1)) return { bp: BP_COMPARE, kind: 'in', op: 'not in', width: 2 };
  return undefined;
}

// expr := prefix { infix-operator expr }   (left-associative, by binding power)
export function parseExpr(c: Cursor, minBp = 0): Expr {
  c.enter();
  try {
    let left = parsePrefix(c);
    for (;;) {
      const inf = infixAt(c);
      if (!inf || inf.bp <= minBp) return left;
      for (let i = 0; i < inf.width; i++) c.next();
      if (inf.kind === 'in') {
        const list = parseInList(c);
        left = { kind: 'in', negated: inf.op === 'not in', arg: left, list, range: { start: left.range.start, end: c.lastEnd() } };
        continue;
      }
      const right = parseExpr(c, inf.bp);
      const range = { start: left.range.start, end: right.range.end };
      left =
        inf.kind === 'logic'
          ? { kind: 'logic', op: inf.op as 'and' | 'or', left, right, range }
          : { kind: 'binary', op: inf.op as BinaryOp, left, right, range };
    }
  } finally {
    c.leave();
  }
}

// in-list := '(' expr { ',' expr } ')'
function parseInList(c: Cursor): Expr[] {
  c.expectOp('(');
  const list: Expr[] = [parseExpr(c)];
  while (c.acceptOp(',')) list.push(parseExpr(c));
  c.expectOp(')');
  return list;
}

// prefix := NOT expr | ('-'|'+') expr | literal | '(' expr ')' postfix | array | CASE …
//         | name '(' args ')' postfix | name postfix
function parsePrefix(c: Cursor): Expr {
  const t = c.peek();
  if (t.kind === 'number') {
    c.next();
    const value = /[.eE]/.test(t.text) ? float(t.value) : t.value;
    return { kind: 'literal', value, range: { start: t.start, end: t.end } };
  }
  if (t.kind === 'string') {
    c.next();
    return { kind: 'literal', value: t.text, range: { start: t.start, end: t.end } };
  }
  // A double-quoted word in an expression is a name, as in EMQX's rulesql (`"topic"` reads the
  // topic); the compiler keeps it a string when no such name exists (compile-expr.ts).
  if (t.kind === 'dstring') {
    c.next();
    const segments = parseSegments(c);
    return { kind: 'path', root: t.text, segments, range: { start: t.start, end: c.lastEnd() }, quoted: true };
  }
  if (t.kind === 'op') {
    if (t.text === '-' || t.text === '+') {
      c.next();
      const arg = parseExpr(c, BP_UNARY);
      const range = { start: t.start, end: arg.range.end };
      // Fold a negative number literal so that `-1` is a constant (indexes, ranges, folding).
      if (arg.kind === 'literal' && isNumber(arg.value)) {
        return { kind: 'literal', value: t.text === '-' ? negate(arg.value) : arg.value, range };
      }
      return { kind: 'unary', op: t.text, arg, range };
    }
    if (t.text === '(') {
      c.next();
      const inner = parseExpr(c);
      c.expectOp(')');
      return parsePostfix(c, inner, t.start);
    }
    if (t.text === '[') return parsePostfix(c, parseArray(c), t.start);
    throw c.error('an expression');
  }
  if (t.kind !== 'ident') throw c.error('an expression');
  const word = t.text.toUpperCase();
  if (word === 'NOT') {
    c.next();
    const arg = parseExpr(c, BP_NOT);
    return { kind: 'unary', op: 'not', arg, range: { start: t.start, end: arg.range.end } };
  }
  if (word === 'TRUE' || word === 'FALSE') {
    c.next();
    return { kind: 'literal', value: word === 'TRUE', range: { start: t.start, end: t.end } };
  }
  if (word === 'CASE') return parseCase(c);
  // `div` and `mod` are infix operators and functions too: `mod(3, 2)` (EMQX).
  if ((word === 'DIV' || word === 'MOD') && c.isOp('(', 1)) {
    c.next();
    return parsePostfix(c, parseCall(c, t), t.start);
  }
  if (RESERVED.has(word)) throw c.error('an expression');
  c.next();
  if (c.isOp('(')) return parsePostfix(c, parseCall(c, t), t.start);
  const segments = parseSegments(c);
  return { kind: 'path', root: t.text, segments, range: { start: t.start, end: c.lastEnd() } };
}

// call := name '(' [ expr { ',' expr } ] ')'
function parseCall(c: Cursor, name: Token): Expr {
  c.expectOp('(');
  const args: Expr[] = [];
  if (!c.isOp(')')) {
    args.push(parseExpr(c));
    while (c.acceptOp(',')) args.push(parseExpr(c));
  }
  c.expectOp(')');
  return {
    kind: 'call',
    name: name.text,
    args,
    nameRange: { start: name.start, end: name.end },
    range: { start: name.start, end: c.lastEnd() },
  };
}

// postfix := { '.' key | '[' index ']' | '[' int '..' int ']' }   — on a call or parenthesis
function parsePostfix(c: Cursor, target: Expr, start: number): Expr {
  const segments = parseSegments(c);
  if (segments.length === 0) return target;
  return { kind: 'access', target, segments, range: { start, end: c.lastEnd() } };
}

// segments := { '.' (name | 'string' | "string") | '[' expr ']' | '[' int '..' int ']' }
export function parseSegments(c: Cursor): Segment[] {
  const segments: Segment[] = [];
  for (;;) {
    if (c.acceptOp('.')) {
      const k = c.peek();
      // Any word is a key after a dot, keywords included (payload.from, payload.end).
      if (k.kind === 'ident' || k.kind === 'string' || k.kind === 'dstring') {
        c.next();
        segments.push({ kind: 'key', name: k.text });
        continue;
      }
      throw c.error('a key after "."');
    }
    if (c.isOp('[')) {
      c.next();
      const r = intRangeAt(c);
      if (r) {
        segments.push({ kind: 'slice', ...r });
        continue;
      }
      const index = parseExpr(c);
      c.expectOp(']');
      segments.push({ kind: 'index', index });
      continue;
    }
    return segments;
  }
}

/** An integer literal, possibly negative, at the cursor (without consuming it). */
function signedIntAt(c: Cursor, ahead: number): { value: number; width: number } | undefined {
  const neg = c.isOp('-', ahead);
  const t = c.peek(ahead + (neg ? 1 : 0));
  if (t.kind !== 'number' || !Number.isInteger(t.value)) return undefined;
  return { value: neg ? -t.value : t.value, width: neg ? 2 : 1 };
}

/** `int '..' int ']'` after a '[' (slices and range literals), consumed; undefined if not one. */
function intRangeAt(c: Cursor): { from: number; to: number } | undefined {
  const from = signedIntAt(c, 0);
  if (!from || !c.isOp('..', from.width)) return undefined;
  for (let i = 0; i <= from.width; i++) c.next();
  const to = signedIntAt(c, 0);
  if (!to) throw c.error('an integer after ".."');
  for (let i = 0; i < to.width; i++) c.next();
  c.expectOp(']');
  return { from: from.value, to: to.value };
}

// array := '[' ']' | '[' int '..' int ']' | '[' expr { ',' expr } ']'
function parseArray(c: Cursor): Expr {
  const open = c.expectOp('[');
  const r = intRangeAt(c);
  if (r) {
    return { kind: 'range', ...r, range: { start: open.start, end: c.lastEnd() } };
  }
  const items: Expr[] = [];
  if (!c.isOp(']')) {
    items.push(parseExpr(c));
    while (c.acceptOp(',')) items.push(parseExpr(c));
  }
  c.expectOp(']');
  return { kind: 'array', items, range: { start: open.start, end: c.lastEnd() } };
}

// case := CASE [expr] WHEN expr THEN expr { WHEN expr THEN expr } [ELSE expr] END
function parseCase(c: Cursor): Expr {
  const start = c.expectKeyword('CASE').start;
  const subject = c.isKeyword('WHEN') ? undefined : parseExpr(c);
  const whens: { when: Expr; then: Expr }[] = [];
  while (c.acceptKeyword('WHEN')) {
    const when = parseExpr(c);
    c.expectKeyword('THEN');
    whens.push({ when, then: parseExpr(c) });
  }
  if (whens.length === 0) throw c.error('WHEN');
  const otherwise = c.acceptKeyword('ELSE') ? parseExpr(c) : undefined;
  if (!c.isKeyword('END')) throw c.error(otherwise ? 'END' : 'WHEN, ELSE or END');
  c.next();
  return { kind: 'case', subject, whens, otherwise, range: { start, end: c.lastEnd() } };
}
