// `weir migrate`, `migrate_on_start` and the demo: every sink whose type can prepare its service
// (its `migrate` hook: PostgreSQL's migrations/ and hypertables) is migrated in turn. The core names
// no sink type; a sink without the hook needs nothing.
import type { SinkConfig, WeirConfig } from '../config/load.js';
import { errorText } from '../errors.js';
import { redactUrl } from '../log.js';
import type { MigrateReport } from '../sinks/types.js';

export function migratableSinks(cfg: WeirConfig, only?: string): SinkConfig[] {
  return [...cfg.sinks.values()].filter((s) => s.type.migrate !== undefined && (only === undefined || s.name === only));
}

/** Migrates each sink; a failure stops there and is thrown as `<sink>: <why>` without credentials. */
export async function migrateSinks(
  sinks: readonly SinkConfig[],
  opts: { dir?: string },
  done: (sink: SinkConfig, r: MigrateReport) => void = () => undefined,
): Promise<void> {
  for (const s of sinks) {
    let r: MigrateReport;
    try {
      r = await s.type.migrate!(s.settings, opts);
    } catch (err) {
      throw new Error(`${s.name}: ${redactUrl(errorText(err))}`, { cause: err });
    }
    done(s, r);
  }
}
