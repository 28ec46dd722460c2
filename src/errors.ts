// One error base for the whole project. Every error weir raises on purpose carries a stable
// `code` from the catalogue (which gives its class: retry, reject or fatal) and the native
// `cause`: the core's codes are in error-codes.ts; a sink's are in its own errors.ts and raised
// with its error class (sinkError below), which reads them.
import { type CoreErrorCode, coreErrorInfo, type ErrorClass, type ErrorCode, type ErrorInfo } from './error-codes.js';

export type { CoreErrorCode, ErrorCode } from './error-codes.js';

export class WeirError extends Error {
  readonly code: ErrorCode;

  /** A core code; a sink's codes are raised with its own error class (sinkError below). */
  constructor(code: CoreErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
  }

  /** The catalogue's entry of its code: the core's here; a sink's error class reads its own codes. */
  protected get info(): ErrorInfo | undefined {
    return coreErrorInfo(this.code);
  }

  /** What weir does with it, from the catalogue. Throws for a code this class does not know. */
  get errorClass(): ErrorClass {
    const info = this.info;
    if (!info)
      throw new Error(`${this.name} ${this.code} is in no catalogue it reads: raise a sink's code with its sink's error class (src/sinks/<type>/errors.ts)`);
    return info.class;
  }

  /** Whether trying again can help (the catalogue's class is `retry`). */
  get retriable(): boolean {
    return this.errorClass === 'retry';
  }
}

/**
 * The error class of a sink, for the codes its errors.ts declares:
 * `export class PulsarError extends sinkError(PULSAR_CODES) {}`. Its errorClass reads those codes,
 * so the core's catalogue holds no sink's code and a new sink edits no core file.
 */
export function sinkError<C extends Exclude<ErrorCode, CoreErrorCode>>(codes: Readonly<Record<C, ErrorInfo>>) {
  return class SinkError extends WeirError {
    declare readonly code: C;

    constructor(code: C, message: string, opts: { cause?: unknown } = {}) {
      // WeirError's constructor takes core codes only, so that a sink's code cannot be raised
      // without the class that knows it; this is that class.
      super(code as ErrorCode as CoreErrorCode, message, opts);
    }

    protected override get info(): ErrorInfo {
      return codes[this.code];
    }
  };
}

/** A problem in weir.yaml or a rule file, located at file:line:col and the key path. */
export class ConfigError extends WeirError {
  declare readonly code: CoreErrorCode;
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly path: string;

  /** `value`, when given, is quoted after the key path: "broker.url 'htp:/nope': …" (redact secrets first). */
  constructor(code: CoreErrorCode, message: string, where: { file: string; line?: number; col?: number; path?: string; value?: string }) {
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
