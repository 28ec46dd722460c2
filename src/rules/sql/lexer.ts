// Rule SQL tokens, EMQX's lexical rules: case-insensitive keywords, identifiers, single- and
// double-quoted text (a string, and a quoted name in an expression: parse-expr.ts; FROM takes
// either as a topic filter), integers and floats, and the operator set of the dialect. Nothing
// else (no comments).
import { RuleError } from '../errors.js';

export type TokenKind = 'ident' | 'string' | 'dstring' | 'number' | 'op' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Identifier or operator text, or the decoded string contents. */
  readonly text: string;
  /** For numbers, the value. */
  readonly value: number;
  readonly start: number;
  readonly end: number;
}

const TWO_CHAR_OPS = new Set(['..', '=~', '!=', '<>', '<=', '>=']);
const ONE_CHAR_OPS = new Set(['.', ',', '(', ')', '[', ']', '+', '-', '*', '/', '=', '<', '>']);

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c);
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Splits SQL into tokens; throws a RuleError at the first character that starts no token. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
      i++;
      continue;
    }
    const start = i;
    if (isIdentStart(c)) {
      while (i < n && isIdentPart(sql.charCodeAt(i))) i++;
      tokens.push({ kind: 'ident', text: sql.slice(start, i), value: 0, start, end: i });
      continue;
    }
    if (isDigit(c)) {
      i = scanNumber(sql, i);
      const text = sql.slice(start, i);
      tokens.push({ kind: 'number', text, value: Number(text), start, end: i });
      continue;
    }
    if (c === 39 || c === 34) {
      const { text, end } = scanString(sql, i, c);
      tokens.push({ kind: c === 39 ? 'string' : 'dstring', text, value: 0, start, end });
      i = end;
      continue;
    }
    const two = sql.slice(i, i + 2);
    // `-- note` would otherwise read as two minus signs and the note as a name (a - -note):
    // say that rule SQL has no comments. `--1` and `--x` stay arithmetic, as in EMQX.
    if ((two === '--' && (i + 2 >= n || /\s|-/.test(sql[i + 2] as string))) || two === '/*') {
      throw new RuleError(
        'rule.unexpected_char',
        `rule SQL has no comments (EMQX's has none): remove ${JSON.stringify(two)}, or write the note as a YAML # comment above sql:`,
        sql,
        {
          range: { start, end: start + 2 },
          expected: 'a token',
        },
      );
    }
    if (TWO_CHAR_OPS.has(two)) {
      tokens.push({ kind: 'op', text: two, value: 0, start, end: i + 2 });
      i += 2;
      continue;
    }
    const one = sql[i] as string;
    if (ONE_CHAR_OPS.has(one)) {
      tokens.push({ kind: 'op', text: one, value: 0, start, end: i + 1 });
      i++;
      continue;
    }
    throw new RuleError('rule.unexpected_char', `unexpected character ${JSON.stringify(one)}`, sql, {
      range: { start, end: start + 1 },
      expected: 'a token',
    });
  }
  tokens.push({ kind: 'eof', text: '', value: 0, start: n, end: n });
  return tokens;
}

// digits [ '.' digits ] [ (e|E) [+-] digits ] — a '.' followed by '.' is a range, not a fraction.
function scanNumber(sql: string, i: number): number {
  const n = sql.length;
  while (i < n && isDigit(sql.charCodeAt(i))) i++;
  if (sql.charCodeAt(i) === 46 && isDigit(sql.charCodeAt(i + 1))) {
    i++;
    while (i < n && isDigit(sql.charCodeAt(i))) i++;
  }
  const e = sql.charCodeAt(i);
  if (e === 101 || e === 69) {
    let j = i + 1;
    const s = sql.charCodeAt(j);
    if (s === 43 || s === 45) j++;
    if (isDigit(sql.charCodeAt(j))) {
      while (j < n && isDigit(sql.charCodeAt(j))) j++;
      i = j;
    }
  }
  return i;
}

// A quoted string. The quote is escaped by doubling it or by a backslash; every other backslash
// sequence is kept as written, as EMQX does (regex patterns such as '\d+' pass through, and the
// unescape() function exists to turn '\n' into a newline).
function scanString(sql: string, i: number, quote: number): { text: string; end: number } {
  const n = sql.length;
  let out = '';
  let j = i + 1;
  let chunk = j;
  while (j < n) {
    const c = sql.charCodeAt(j);
    // '\\' is two backslashes kept as written; the second one escapes nothing ('\\' ends there).
    if (c === 92 && sql.charCodeAt(j + 1) === 92) {
      j += 2;
      continue;
    }
    if (c === 92 && sql.charCodeAt(j + 1) === quote) {
      out += sql.slice(chunk, j) + String.fromCharCode(quote);
      j += 2;
      chunk = j;
      continue;
    }
    if (c === quote) {
      if (sql.charCodeAt(j + 1) === quote) {
        out += sql.slice(chunk, j + 1);
        j += 2;
        chunk = j;
        continue;
      }
      return { text: out + sql.slice(chunk, j), end: j + 1 };
    }
    j++;
  }
  throw new RuleError('rule.unterminated_string', 'unterminated string', sql, {
    range: { start: i, end: n },
    expected: String.fromCharCode(quote),
  });
}
