// A WriteResult from how each item of a batch ended, for a sink that sends its items one by one
// (mqtt: a PUBLISH each; http: a request each, or per group): classified by the sink, refused
// items dead-lettered alone, the rest retried.
import { ALL_WRITTEN, type ErrorClass, type WriteResult } from './types.js';

/**
 * `errors[i]` is why item i failed, undefined when it was written. A fatal error is thrown (the
 * whole batch again, later: the core's fatal path); so is the first retry error when no item went
 * through, so that the core sees an outage (readiness down) rather than a partial write.
 */
export function resultOf(errors: ReadonlyArray<Error | undefined>, classify: (err: unknown) => ErrorClass): WriteResult {
  const rejected: Array<{ index: number; error: Error }> = [];
  const retry: number[] = [];
  let retryError: Error | undefined;
  for (const [index, error] of errors.entries()) {
    if (error === undefined) continue;
    const cls = classify(error);
    if (cls === 'fatal') throw error;
    if (cls === 'reject') rejected.push({ index, error });
    else {
      retry.push(index);
      retryError ??= error;
    }
  }
  if (retry.length === errors.length && retryError) throw retryError;
  if (rejected.length === 0 && retry.length === 0) return ALL_WRITTEN;
  return { rejected, retry, retryError };
}
