// Errors the rule engine raises on purpose. A RuleError is a rule that cannot be compiled (it is
// rejected at load, with the place and what was expected); a RuleEvalError is one message that a
// rule could not evaluate (counted as failed.exception, never fatal to the pipeline).
import { type CoreErrorCode, WeirError } from '../errors.js';

export interface SourceRange {
  /** Offsets into the SQL text, end exclusive. */
  readonly start: number;
  readonly end: number;
}

export interface RuleErrorInfo {
  readonly range?: SourceRange;
  /** What the parser expected at that place (`FROM`, `an expression`…), when it is a syntax error. */
  readonly expected?: string;
  readonly cause?: unknown;
}

/** 1-based line and column of an offset in a text. */
export function lineCol(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: end - lineStart + 1 };
}

/** The source line holding `offset` and a caret line under the offending range. */
export function caretLines(text: string, range: SourceRange): string {
  const lineStart = text.lastIndexOf('\n', Math.max(0, range.start - 1)) + 1;
  let lineEnd = text.indexOf('\n', range.start);
  if (lineEnd < 0) lineEnd = text.length;
  const src = text.slice(lineStart, lineEnd);
  const pad = ' '.repeat(Math.max(0, range.start - lineStart));
  const width = Math.max(1, Math.min(range.end, lineEnd) - range.start);
  return `${src}\n${pad}${'^'.repeat(width)}`;
}

/** A rule that does not compile: syntax error, unknown function, wrong arity, limit exceeded. */
export class RuleError extends WeirError {
  declare readonly code: CoreErrorCode;
  readonly line: number;
  readonly col: number;
  readonly expected: string | undefined;
  readonly range: SourceRange | undefined;
  /** The message without the location and caret lines. */
  readonly reason: string;

  constructor(code: CoreErrorCode, reason: string, source: string, info: RuleErrorInfo = {}) {
    const range = info.range;
    const { line, col } = range ? lineCol(source, range.start) : { line: 0, col: 0 };
    const where = range ? ` at line ${line}, column ${col}` : '';
    const caret = range ? `\n${caretLines(source, range)}` : '';
    super(code, `${reason}${where}${caret}`, { cause: info.cause });
    this.line = line;
    this.col = col;
    this.expected = info.expected;
    this.range = range;
    this.reason = reason;
  }
}

/** One message a rule could not evaluate: a type error, a payload that is not JSON, a limit. */
export class RuleEvalError extends WeirError {
  declare readonly code: CoreErrorCode;

  constructor(code: CoreErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(code, message, opts);
  }
}

/** Wraps anything thrown during evaluation into a RuleEvalError (the only error evaluate throws). */
export function asEvalError(err: unknown): RuleEvalError {
  if (err instanceof RuleEvalError) return err;
  if (err instanceof RangeError) {
    // Stack overflow or invalid lengths from deeply nested or huge data: a limit, not a crash.
    return new RuleEvalError('rule.limit', `evaluation limit exceeded: ${err.message}`, { cause: err });
  }
  const text = err instanceof Error ? err.message : String(err);
  return new RuleEvalError('rule.eval_failed', text, { cause: err });
}
