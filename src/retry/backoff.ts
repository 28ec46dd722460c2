// The one retry policy: exponential backoff with jitter, bounded by max_ms. Tests pass a fast
// policy through config (initial_ms: 1); production code has no test-only branch.
import type { RetryConfig } from '../config/common-spec.js';

/** Wait before attempt `attempt` (1 = the first retry): initial·multiplier^(attempt-1), capped, plus up to 20% jitter. */
export function backoffMs(policy: RetryConfig, attempt: number): number {
  const base = Math.min(policy.max_ms, policy.initial_ms * policy.multiplier ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + 0.2 * Math.random()));
}

/** Sleeps `ms`, or until `signal` aborts (then resolves early: the caller checks the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
