// An API request the console refuses, with the status and the sentence the page shows: a bad
// body (400), no access (403), nothing there (404), busy (409). Anything else thrown in a handler
// is answered 500 with its message, never a stack trace.
export class RequestError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 405 | 409 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The value as an object, or a 400 naming `what`. */
export function objectField(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new RequestError(400, `${what} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** An optional string field, or a 400. */
export function stringField(o: Record<string, unknown>, key: string, what = key): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RequestError(400, `${what} must be a string`);
  return v;
}

/** An optional finite number field, or a 400. */
export function numberField(o: Record<string, unknown>, key: string, what = key): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RequestError(400, `${what} must be a number`);
  return v;
}
