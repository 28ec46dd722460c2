// Rule SQL statements by recursive descent (expressions are parse-expr.ts's Pratt loop).
// parseRule throws the first error; parseRuleRecover collects every error it can find, skipping
// to the next field or clause after each, for `weir check`.
import type { Field, FromFilter, Segment, Statement, Target } from './ast.js';
import { Cursor } from './cursor.js';
import { RuleError } from '../errors.js';
import { tokenize } from './lexer.js';
import { LIMITS } from '../limits.js';
import { parseExpr, RESERVED } from './parse-expr.js';
import { validateTopicFilter } from '../topic.js';

/** Parses one rule statement; throws a RuleError at the first problem. */
export function parseRule(sql: string): Statement {
  const { statement, errors } = run(sql, false);
  if (errors[0]) throw errors[0];
  return statement as Statement;
}

/** Parses one rule statement, collecting every error rather than stopping at the first. */
export function parseRuleRecover(sql: string): { statement: Statement | undefined; errors: RuleError[] } {
  return run(sql, true);
}

function run(sql: string, recover: boolean): { statement: Statement | undefined; errors: RuleError[] } {
  const errors: RuleError[] = [];
  if (sql.length > LIMITS.maxSqlLength) {
    errors.push(new RuleError('rule.too_long', `rule SQL longer than ${LIMITS.maxSqlLength} characters`, sql));
    return { statement: undefined, errors };
  }
  let tokens: ReturnType<typeof tokenize>;
  try {
    tokens = tokenize(sql);
  } catch (err) {
    errors.push(err as RuleError);
    return { statement: undefined, errors };
  }
  const p = new StatementParser(new Cursor(sql, tokens), recover, errors);
  let statement: Statement | undefined;
  try {
    statement = p.statement();
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    errors.push(err);
  }
  return { statement: errors.length === 0 ? statement : undefined, errors };
}

/** Clause keywords a recovering parser may resume at. */
const CLAUSES = ['FROM', 'WHERE', 'DO', 'INCASE'];

class StatementParser {
  constructor(
    private readonly c: Cursor,
    private readonly recover: boolean,
    private readonly errors: RuleError[],
  ) {}

  // statement := select | foreach
  statement(): Statement {
    const c = this.c;
    let st: Statement;
    if (c.isKeyword('SELECT')) st = this.select();
    else if (c.isKeyword('FOREACH')) st = this.foreach();
    else throw c.error('SELECT or FOREACH');
    if (c.peek().kind !== 'eof') throw c.error('end of input');
    return st;
  }

  // select := SELECT fields FROM filters [WHERE expr]
  private select(): Statement {
    this.c.expectKeyword('SELECT');
    const fields = this.fields();
    const from = this.from();
    const where = this.c.acceptKeyword('WHERE') ? parseExpr(this.c) : undefined;
    return { kind: 'select', fields, from, where };
  }

  // foreach := FOREACH fields [DO fields] [INCASE expr] FROM filters [WHERE expr]
  private foreach(): Statement {
    const c = this.c;
    c.expectKeyword('FOREACH');
    const fields = this.fields();
    const last = fields[fields.length - 1];
    if (last?.kind === 'star') {
      this.fail(new RuleError('rule.foreach_star', 'the last FOREACH field must be an expression that gives an array, not *', c.sql, { range: last.range }));
    }
    const doFields = c.acceptKeyword('DO') ? this.fields() : undefined;
    const incase = c.acceptKeyword('INCASE') ? this.guarded(() => parseExpr(c)) : undefined;
    const from = this.from();
    const where = c.acceptKeyword('WHERE') ? parseExpr(c) : undefined;
    return { kind: 'foreach', fields, doFields, incase, from, where };
  }

  // fields := field { ',' field }
  private fields(): Field[] {
    const c = this.c;
    const fields: Field[] = [];
    do {
      if (fields.length >= LIMITS.maxFields) throw c.error(`at most ${LIMITS.maxFields} fields`);
      const f = this.guarded(() => this.field());
      if (f) fields.push(f);
    } while (c.acceptOp(','));
    return fields;
  }

  // field := '*' | expr [AS target]
  private field(): Field {
    const c = this.c;
    const t = c.peek();
    if (c.acceptOp('*')) return { kind: 'star', range: { start: t.start, end: t.end } };
    const expr = parseExpr(c);
    const alias = c.acceptKeyword('AS') ? this.target() : undefined;
    const range = { start: t.start, end: c.lastEnd() };
    return { kind: 'field', expr, alias, text: c.sql.slice(expr.range.start, expr.range.end), range };
  }

  // target := name { '.' key | '[' int ']' | '[' expr ']' } | 'string' | "string"
  private target(): Target {
    const c = this.c;
    const t = c.peek();
    if (t.kind === 'string' || t.kind === 'dstring') {
      c.next();
      return { root: t.text, segments: [] };
    }
    if (t.kind !== 'ident' || RESERVED.has(t.text.toUpperCase())) throw c.error('an alias name after AS');
    c.next();
    const segments: Segment[] = [];
    for (;;) {
      if (c.acceptOp('.')) {
        const k = c.peek();
        if (k.kind !== 'ident' && k.kind !== 'string' && k.kind !== 'dstring') throw c.error('a key after "."');
        c.next();
        segments.push({ kind: 'key', name: k.text });
      } else if (c.acceptOp('[')) {
        const neg = c.isOp('-');
        const n = c.peek(neg ? 1 : 0);
        if (n.kind === 'number') {
          // `[0]` writes at the head and `[-0]` at the tail: the sign of zero is kept.
          if (neg) c.next();
          if (!Number.isInteger(n.value)) throw c.error('an integer index');
          c.next();
          c.expectOp(']');
          const value = neg ? -n.value : n.value;
          segments.push({ kind: 'index', index: { kind: 'literal', value, range: { start: n.start, end: n.end } } });
        } else {
          // `AS a[b]`: an index read per message (EMQX reads it from the record being written).
          const index = parseExpr(c);
          c.expectOp(']');
          segments.push({ kind: 'index', index });
        }
      } else {
        return { root: t.text, segments };
      }
    }
  }

  // filters := FROM filter { ',' filter }      filter := "topic/filter" | 'topic/filter'
  private from(): FromFilter[] {
    const c = this.c;
    c.expectKeyword('FROM');
    const filters: FromFilter[] = [];
    do {
      const t = c.peek();
      // EMQX takes either quote here (t_sqlparse_both_string_types_in_from).
      if (t.kind !== 'dstring' && t.kind !== 'string') throw c.error('a quoted topic filter');
      c.next();
      const range = { start: t.start, end: t.end };
      const why =
        t.text.startsWith('$events/') || t.text.startsWith('$bridges/')
          ? `${t.text}: weir rules see published messages only, not EMQX events or bridges`
          : validateTopicFilter(t.text);
      if (why) this.fail(new RuleError('rule.bad_filter', `invalid topic filter: ${why}`, c.sql, { range }));
      filters.push({ filter: t.text, range });
    } while (c.acceptOp(','));
    return filters;
  }

  /** Runs a sub-parser; in recover mode records its error and skips to the next field or clause. */
  private guarded<T>(parse: () => T): T | undefined {
    if (!this.recover) return parse();
    try {
      return parse();
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      this.errors.push(err);
      this.skip();
      return undefined;
    }
  }

  private fail(err: RuleError): void {
    if (!this.recover) throw err;
    this.errors.push(err);
  }

  /** Skips to a ',' at nesting level 0, a clause keyword, or the end. */
  private skip(): void {
    const c = this.c;
    let depth = 0;
    for (;;) {
      const t = c.peek();
      if (t.kind === 'eof') return;
      if (t.kind === 'op' && (t.text === '(' || t.text === '[')) depth++;
      if (t.kind === 'op' && (t.text === ')' || t.text === ']')) depth = Math.max(0, depth - 1);
      if (depth === 0 && (c.isOp(',') || CLAUSES.some((k) => c.isKeyword(k)))) return;
      c.next();
    }
  }
}
