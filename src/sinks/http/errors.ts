// The http (webhook) sink's error codes: what each means, its class (what weir does with it) and
// what the operator should do. The sinks' section of docs/errors.md is generated from these
// (src/sinks/error-catalogue.ts composes them with the core's); HttpError raises them and reads its
// class here.
import type { ErrorInfo } from '../../error-codes.js';
import { sinkError } from '../../errors.js';

const SERVER_AWAY = 'check the server; weir retries meanwhile, honouring Retry-After (the source messages stay unacked)';

export const HTTP_CODES = {
  'sink.http.aborted': {
    class: 'retry',
    meaning: 'a request abandoned at shutdown (the source message stays unacked)',
    action: 'nothing: the broker delivers it again',
  },
  'sink.http.closed': { class: 'fatal', meaning: 'a write after close', action: 'a bug: report it' },
  'sink.http.encode': {
    class: 'reject',
    meaning: 'an output that cannot become a request: a URL that does not render as http(s)://, a body template with no value (dead-lettered)',
    action: "fix the rule's url/body templates, then `weir dlq replay`",
  },
  'sink.http.rejected': {
    class: 'reject',
    meaning: 'the server answered 4xx (not 401, 403, 407, 408 or 429): it refuses the message; the dead letter names the status and begins the response body',
    action: "fix the rule's body or the server, then `weir dlq replay`",
  },
  'sink.http.unavailable': {
    class: 'retry',
    meaning: 'the server answered 408, 429 or 5xx: it cannot take the message now',
    action: SERVER_AWAY,
  },
  'sink.http.timeout': { class: 'retry', meaning: 'no complete response within timeout_ms', action: SERVER_AWAY },
  'sink.http.unauthorized': {
    class: 'fatal',
    meaning: "the server answered 401, 403 or 407: weir's credentials are refused, for every message alike",
    action: "fix the sink's headers (a token from ${ENV}); weir retries slowly meanwhile rather than dead-letter everything",
  },
} as const satisfies Record<string, ErrorInfo>;

export type HttpErrorCode = keyof typeof HTTP_CODES;

declare module '../../error-codes.js' {
  interface SinkErrorCodes extends Record<HttpErrorCode, true> {}
}

/** An error of the http sink, with one of its codes. */
export class HttpError extends sinkError(HTTP_CODES) {
  /** The response status, when a response came. */
  status?: number;
  /** How long the server asked to wait (Retry-After), in ms. */
  retryAfterMs?: number;
}
