// One error base for the whole project. Every error weir raises on purpose carries a stable
// `code` from the catalogue in error-codes.ts (which gives its class: retry, reject or fatal) and
// the native `cause`.
import { type ErrorClass, type ErrorCode, errorInfo } from './error-codes.js';

export type { ErrorCode } from './error-codes.js';

export class WeirError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
  }

  /** What weir does with it, from the catalogue. */
  get errorClass(): ErrorClass {
    return errorInfo(this.code).class;
  }

  /** Whether trying again can help (the catalogue's class is `retry`). */
  get retriable(): boolean {
    return this.errorClass === 'retry';
  }
}

/** A problem in weir.yaml or a rule file, located at file:line:col and the key path. */
export class ConfigError extends WeirError {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly path: string;

  /** `value`, when given, is quoted after the key path: "broker.url 'htp:/nope': …" (redact secrets first). */
  constructor(code: ErrorCode, message: string, where: { file: string; line?: number; col?: number; path?: string; value?: string }) {
    const line = where.line ?? 0;
    const col = where.col ?? 0;
    const path = where.path ?? '';
    const loc = line > 0 ? `${where.file}:${line}:${col}` : where.file;
    const key = path && where.value !== undefined ? `${path} '${where.value}'` : path;
    super(code, `${loc}: ${key ? `${key}: ` : ''}${message}`);
    this.file = where.file;
    this.line = line;
    this.col = col;
    this.path = path;
  }
}

/** Message text of anything thrown, without trusting it to be an Error. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Anything thrown or rejected, as an Error (a non-Error becomes one with its text). */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
