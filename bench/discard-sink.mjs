// The bench-only sink that binds and encodes as the PostgreSQL sink does and then drops the
// batch (bench/discard-weir.mjs, bench/pipeline-rules.mjs). It exists only in those processes:
// weir itself has no sink that loses data.
import { postgresSinkType } from '../dist/sinks/postgres/index.js';

/** Binds actions as the PostgreSQL sink does; writes nothing anywhere. Bench-only. */
export const BENCH_DISCARD = {
  ...postgresSinkType,
  type: 'bench_discard',
  create(cfg, deps) {
    const real = postgresSinkType.create(cfg, deps);
    return {
      bind: (action, ruleId) => real.bind(action, ruleId),
      connect: async () => undefined,
      write: async () => ({ rejected: [], retry: [] }),
      probe: async () => undefined,
      classify: (err) => real.classify(err),
      deadLetter: async () => undefined,
      close: async () => undefined,
    };
  },
};
