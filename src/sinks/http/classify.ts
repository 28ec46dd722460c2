// Errors of a request → what the core does with them, in one place. The sink turns every HTTP
// status into one of its own codes (sink.ts: 2xx written; 408, 429, 5xx retry; 401, 403, 407
// fatal; other statuses reject), which carry their class in the catalogue (./errors.ts).
import { WeirError } from '../../errors.js';
import { isTlsFailure, NODE_TRANSIENT } from '../node-errors.js';
import type { ErrorClass } from '../types.js';

export function classifyHttpError(err: unknown): ErrorClass {
  if (err instanceof WeirError) return err.errorClass;
  const code = (err as { code?: unknown } | null)?.code;
  // The server is down, restarting or unreachable; or it closed a kept-alive connection under a request.
  if (typeof code === 'string' && (NODE_TRANSIENT.has(code) || code === 'ECONNABORTED' || code === 'UND_ERR_SOCKET')) return 'retry';
  // TLS problems (bad CA, expired or mismatched certificate) do not heal by themselves.
  if (isTlsFailure(code)) return 'fatal';
  // Anything else (a parse error of the response, a socket hang up): a bounded retry by the core.
  return 'retry';
}
