// The one retry policy: exponential backoff with jitter, bounded by max_ms. Tests pass a fast
// policy through config (initial_ms: 1); production code has no test-only branch.
import type { RetryConfig } from '../config/common-spec.js';

/** Wait before attempt `attempt` (1 = the first retry): initial·multiplier^(attempt-1), capped, plus up to 20% jitter. */
export function backoffMs(policy: RetryConfig, attempt: number): number {
  const base = Math.min(policy.max_ms, policy.initial_ms * policy.multiplier ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + 0.2 * Math.random()));
}

/** Longest wait between two writes that failed for good (class `fatal`: docs/errors.md). */
export const FATAL_MAX_MS = 30_000;

/**
 * Wait before retrying a write that failed for good (a missing table, bad credentials): an
 * operator must act, so weir retries slowly, starting where transient retries top out (max_ms)
 * and doubling up to FATAL_MAX_MS, so the stream resumes within that long of the fix.
 */
export function fatalBackoffMs(policy: RetryConfig, attempt: number): number {
  const slowest = Math.max(FATAL_MAX_MS, policy.max_ms);
  return backoffMs({ ...policy, initial_ms: policy.max_ms, max_ms: slowest, multiplier: Math.max(2, policy.multiplier) }, attempt);
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

/**
 * Reconnecting after another client took the broker session (the same client id): 1 s doubling
 * to a minute, so two processes that share an id stop fighting over the session every second
 * (core/ingest/session-takeover.ts). Not configurable: the fix is a client id of its own, not a tuning.
 */
export const TAKEN_OVER_POLICY: RetryConfig = { initial_ms: 1000, max_ms: 60_000, multiplier: 2, max_attempts: 0 };

/**
 * Storing dead letters (weir run's queue, `weir dlq replay`'s): 200 ms doubling to 10 s, for ever.
 * A letter is stored before its message is acked, so an outage of the store holds the stream
 * (the broker keeps the messages) until the store is back.
 */
export const DEAD_LETTER_POLICY: RetryConfig = { initial_ms: 200, max_ms: 10_000, multiplier: 2, max_attempts: 0 };
