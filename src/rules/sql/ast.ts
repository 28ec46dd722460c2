// The rule SQL syntax tree: a discriminated union on `kind`; every node carries its source range
// (offsets into the SQL text) so compile-time errors can point at it.
import type { SourceRange } from '../errors.js';
import type { WholeFloat } from '../values/floats.js';

/** One step of a path: `.key`, `[index]` (1-based, negative from the end) or `[from..to]`. */
export type Segment =
  | { readonly kind: 'key'; readonly name: string }
  | { readonly kind: 'index'; readonly index: Expr }
  | { readonly kind: 'slice'; readonly from: number; readonly to: number };

export type Expr =
  /** A number written with a fraction or exponent is a float: `2.0` is a WholeFloat. */
  | { readonly kind: 'literal'; readonly value: string | number | WholeFloat | boolean; readonly range: SourceRange }
  /** `payload.a[1]`: a variable (event field, alias or FOREACH item) and the steps into it. */
  | { readonly kind: 'path'; readonly root: string; readonly segments: readonly Segment[]; readonly range: SourceRange; readonly quoted?: true }
  /** `f(x).a`: steps into the value of any other expression. */
  | { readonly kind: 'access'; readonly target: Expr; readonly segments: readonly Segment[]; readonly range: SourceRange }
  | { readonly kind: 'array'; readonly items: readonly Expr[]; readonly range: SourceRange }
  /** `[1..5]` on its own: the list of integers from..to. */
  | { readonly kind: 'range'; readonly from: number; readonly to: number; readonly range: SourceRange }
  | { readonly kind: 'unary'; readonly op: '-' | '+' | 'not'; readonly arg: Expr; readonly range: SourceRange }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr; readonly range: SourceRange }
  | { readonly kind: 'logic'; readonly op: 'and' | 'or'; readonly left: Expr; readonly right: Expr; readonly range: SourceRange }
  | { readonly kind: 'in'; readonly negated: boolean; readonly arg: Expr; readonly list: readonly Expr[]; readonly range: SourceRange }
  | {
      readonly kind: 'case';
      /** The operand of a simple CASE (`CASE x WHEN 1 THEN …`); absent for a searched CASE. */
      readonly subject: Expr | undefined;
      readonly whens: readonly { readonly when: Expr; readonly then: Expr }[];
      readonly otherwise: Expr | undefined;
      readonly range: SourceRange;
    }
  | { readonly kind: 'call'; readonly name: string; readonly args: readonly Expr[]; readonly nameRange: SourceRange; readonly range: SourceRange };

export type ArithOp = '+' | '-' | '*' | '/' | 'div' | 'mod';
export type CompareOp = '=' | '!=' | '<>' | '<' | '<=' | '>' | '>=' | '=~';
export type BinaryOp = ArithOp | CompareOp;

/** Where a field's value goes: `AS a.b[1]`, or the path of an unaliased path field. */
export interface Target {
  readonly root: string;
  readonly segments: readonly Segment[];
}

export type Field =
  | { readonly kind: 'star'; readonly range: SourceRange }
  | {
      readonly kind: 'field';
      readonly expr: Expr;
      /** The explicit `AS` target, if any. */
      readonly alias: Target | undefined;
      /** The expression as written, the output key of an unaliased non-path field. */
      readonly text: string;
      readonly range: SourceRange;
    };

export interface FromFilter {
  readonly filter: string;
  readonly range: SourceRange;
}

export interface SelectStatement {
  readonly kind: 'select';
  readonly fields: readonly Field[];
  readonly from: readonly FromFilter[];
  readonly where: Expr | undefined;
}

export interface ForeachStatement {
  readonly kind: 'foreach';
  /** The FOREACH list: earlier fields are selected, the last one is the collection. */
  readonly fields: readonly Field[];
  readonly doFields: readonly Field[] | undefined;
  readonly incase: Expr | undefined;
  readonly from: readonly FromFilter[];
  readonly where: Expr | undefined;
}

export type Statement = SelectStatement | ForeachStatement;

/** Calls `fn` on each direct sub-expression of `e` (the one place that knows every node's children). */
export function forEachChild(e: Expr, fn: (child: Expr | undefined) => void): void {
  switch (e.kind) {
    case 'access':
      fn(e.target);
      for (const s of e.segments) if (s.kind === 'index') fn(s.index);
      return;
    case 'path':
      for (const s of e.segments) if (s.kind === 'index') fn(s.index);
      return;
    case 'array':
      e.items.forEach(fn);
      return;
    case 'unary':
      fn(e.arg);
      return;
    case 'binary':
    case 'logic':
      fn(e.left);
      fn(e.right);
      return;
    case 'in':
      fn(e.arg);
      e.list.forEach(fn);
      return;
    case 'case':
      fn(e.subject);
      for (const w of e.whens) {
        fn(w.when);
        fn(w.then);
      }
      fn(e.otherwise);
      return;
    case 'call':
      e.args.forEach(fn);
      return;
    default:
      return;
  }
}

/** Calls `fn` on every top-level expression of a statement: fields, DO fields, WHERE, INCASE. */
export function forEachStatementExpr(st: Statement, fn: (e: Expr | undefined) => void): void {
  const fields: Field[] = [...st.fields, ...(st.kind === 'foreach' ? (st.doFields ?? []) : [])];
  for (const f of fields) if (f.kind === 'field') fn(f.expr);
  fn(st.where);
  if (st.kind === 'foreach') fn(st.incase);
}
