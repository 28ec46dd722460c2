// weir migrate: prepare every sink that needs it (PostgreSQL: migrations/ and hypertables), or one.
import { migratableSinks, migrateSinks } from '../core/app/migrate-sinks.js';
import { errorText } from '../errors.js';
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './command.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir migrate [--config FILE] [--sink NAME] [--dir DIR]

Applies the versioned SQL files of migrations/ that a PostgreSQL sink has not seen yet, each in a
transaction, recorded in weir_migrations. Where the timescaledb extension is available, the
telemetry table becomes a hypertable, and the sink's hypertables settings (chunk interval,
compression and retention policies) are applied: a second run changes nothing, a changed setting
replaces its policy (docs/timescaledb.md).

${CONFIG_HELP}  -s, --sink NAME     only this sink (default: every sink that has migrations: type postgres)
  -d, --dir DIR       migrations directory (default: the package's migrations/)
`;

export const migrateCommand: Command = {
  summary: 'apply migrations/ to the PostgreSQL sinks',
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, sink: { type: 'string', short: 's' }, dir: { type: 'string', short: 'd' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config);
    if (!cfg) return 1;
    const targets = migratableSinks(cfg, p.values.sink);
    if (targets.length === 0) {
      process.stderr.write(`error: no sink with migrations (type postgres)${p.values.sink ? ` named '${p.values.sink}'` : ''} in ${cfg.file}\n`);
      return 1;
    }
    try {
      await migrateSinks(targets, { dir: p.values.dir }, (s, r) => {
        process.stdout.write(
          `${s.name} (${r.target}): applied ${r.applied.length ? r.applied.join(', ') : 'nothing new'}; ${r.alreadyApplied} already applied\n`,
        );
        for (const n of r.notes) process.stdout.write(`${s.name}: note: ${n}\n`);
      });
    } catch (err) {
      process.stderr.write(`error: ${errorText(err)}\n`);
      return 1;
    }
    return 0;
  },
};
