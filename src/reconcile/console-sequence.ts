// weir.yaml's `console.sequence` checks for the console's Reconcile view: the same plan and SQL as
// `weir reconcile --sequence` (sequence.ts, sequence-target.ts), run once per call on connections
// of its own that are closed after, so an idle console holds no database connection. `weir run`
// hands the function down to the runtime: reconcile sits above the application's layer.
import type { SequenceCheck } from '../core/app/console/api.js';
import type { WeirConfig } from '../config/types.js';
import { parseSequenceSpec, type SequenceResult } from './sequence.js';
import { prepareSequence } from './sequence-target.js';

/** A function that runs every `console.sequence` check once; undefined when none is configured. */
export function consoleSequenceCheck(cfg: WeirConfig): (() => Promise<SequenceCheck[]>) | undefined {
  const texts = cfg.console.sequence;
  if (texts.length === 0) return undefined;
  return async () => {
    const specs = texts.map(parseSequenceSpec);
    const targets = await prepareSequence(cfg, specs, {}, undefined, cfg.console.stale_after);
    try {
      const results = await targets.run(() => undefined);
      return results.map((r, i) => checkOf(texts[i]!, r));
    } finally {
      await targets.close();
    }
  };
}

function checkOf(spec: string, r: SequenceResult): SequenceCheck {
  return {
    spec,
    keys: r.keys,
    rows: r.rows,
    missing: r.missing,
    keys_with_gaps: r.keysWithGaps,
    duplicates: r.duplicates,
    worst: r.worst.map((k) => ({ key: k.key, missing: k.missing, first_missing: k.firstMissing })),
    stale: r.staleness && {
      after: r.staleness.staleAfter,
      keys: r.staleness.staleKeys,
      missing: r.staleness.missing,
      stalest: r.staleness.stalest.map((k) => ({ key: k.key, silence_s: k.silenceS, interval_s: k.intervalS, missing: k.missing })),
    },
  };
}
