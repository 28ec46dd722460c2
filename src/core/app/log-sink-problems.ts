// `weir run` at start: the problems `weir check --connect` would print, logged at error level,
// one entry per problem with its rule file and line. Nothing waits on it for long: a sink that
// cannot be reached is the sink runner's to report (sink-health.ts), and the run goes on either
// way — messages for a broken action are held and retried until it is fixed.
import type { WeirConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import { verifySinks } from './verify-sinks.js';

const VERIFY_TIMEOUT_MS = 10_000;

export async function logSinkProblems(cfg: WeirConfig, log: Logger): Promise<void> {
  const signal = AbortSignal.timeout(VERIFY_TIMEOUT_MS);
  const timeout = new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }));
  const results = await Promise.race([verifySinks(cfg, signal), timeout]);
  for (const r of results ?? []) {
    for (const p of r.problems) log.error({ sink: r.sink, fix: p.suggestion }, `sink lacks what a rule needs: ${p.message}`);
  }
}
