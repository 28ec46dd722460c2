// A cursor over the token list shared by the statement parser and the expression parser: keyword
// tests (case-insensitive, as EMQX), expectations that fail with a located RuleError, and the
// nesting depth bound.
import { RuleError } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { Token } from './lexer.js';

export class Cursor {
  private pos = 0;
  private depth = 0;

  constructor(
    readonly sql: string,
    private readonly tokens: readonly Token[],
  ) {}

  peek(ahead = 0): Token {
    const t = this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)];
    return t as Token;
  }

  next(): Token {
    const t = this.peek();
    if (this.pos < this.tokens.length - 1) this.pos++;
    return t;
  }

  /** The position, to rewind after a lookahead or to skip past a bad field in recover mode. */
  mark(): number {
    return this.pos;
  }

  reset(mark: number): void {
    this.pos = mark;
  }

  /** End offset of the token before the current one: the end of what was just parsed. */
  lastEnd(): number {
    const t = this.tokens[Math.max(0, this.pos - 1)];
    return t ? t.end : 0;
  }

  isKeyword(word: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'ident' && t.text.length === word.length && t.text.toUpperCase() === word;
  }

  isOp(op: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'op' && t.text === op;
  }

  acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.next();
    return true;
  }

  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.next();
    return true;
  }

  expectKeyword(word: string): Token {
    if (!this.isKeyword(word)) throw this.error(word);
    return this.next();
  }

  expectOp(op: string): Token {
    if (!this.isOp(op)) throw this.error(`'${op}'`);
    return this.next();
  }

  /** A syntax error at the current token: "expected X, found Y". */
  error(expected: string, token: Token = this.peek()): RuleError {
    const found = token.kind === 'eof' ? 'end of input' : describe(token);
    const hint = token.kind === 'ident' ? SQL_HABITS[token.text.toUpperCase()] : undefined;
    return new RuleError('rule.expected_token', `expected ${expected}, found ${found}${hint ? `: ${hint}` : ''}`, this.sql, {
      range: { start: token.start, end: Math.max(token.end, token.start + 1) },
      expected,
    });
  }

  /** Enters one level of nesting; fails past LIMITS.maxDepth so deep input cannot blow the stack. */
  enter(): void {
    if (++this.depth > LIMITS.maxDepth) {
      const t = this.peek();
      throw new RuleError('rule.too_deep', `expression nested deeper than ${LIMITS.maxDepth} levels`, this.sql, {
        range: { start: t.start, end: Math.max(t.end, t.start + 1) },
      });
    }
  }

  leave(): void {
    this.depth--;
  }
}

/** Words of other SQL dialects that EMQX's does not have, and what to write instead. */
const SQL_HABITS: Readonly<Record<string, string>> = {
  IS: 'EMQX rule SQL has no IS [NOT] NULL; write is_null(x) or is_not_null(x)',
  LIKE: "EMQX rule SQL has no LIKE; write regex_match(x, '^abc')",
  BETWEEN: 'EMQX rule SQL has no BETWEEN; write x >= a and x <= b',
  ILIKE: "EMQX rule SQL has no ILIKE; write regex_match(x, '(?i)^abc')",
};

function describe(t: Token): string {
  switch (t.kind) {
    case 'string':
      return `string '${t.text}'`;
    case 'dstring':
      return `string "${t.text}"`;
    case 'number':
      return `number ${t.text}`;
    default:
      return `'${t.text}'`;
  }
}
