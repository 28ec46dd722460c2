// weir migrate: apply migrations/ to every postgres sink (or one).
import { errorText } from '../errors.js';
import { redactUrl } from '../log.js';
import { MIGRATIONS_DIR } from '../paths.js';
import { migrate } from '../sinks/postgres/migrate.js';
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './commands.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir migrate [--config FILE] [--sink NAME] [--dir DIR]

Applies the versioned SQL files of migrations/ that a PostgreSQL sink has not seen yet, each in a
transaction, recorded in weir_migrations. The telemetry table becomes a hypertable when the
timescaledb extension is available.

${CONFIG_HELP}  -s, --sink NAME     only this sink (default: every sink of type postgres)
  -d, --dir DIR       migrations directory (default: the package's migrations/)
`;

export const migrateCommand: Command = {
  summary: 'apply migrations/ to the PostgreSQL sinks',
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, sink: { type: 'string', short: 's' }, dir: { type: 'string', short: 'd' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config);
    if (!cfg) return 1;
    const targets = [...cfg.sinks.values()].filter((s) => s.type.type === 'postgres' && (!p.values.sink || s.name === p.values.sink));
    if (targets.length === 0) {
      process.stderr.write(`error: no postgres sink${p.values.sink ? ` named '${p.values.sink}'` : ''} in ${cfg.file}\n`);
      return 1;
    }
    for (const s of targets) {
      const url = String(s.settings.url);
      try {
        const r = await migrate(url, p.values.dir ?? MIGRATIONS_DIR);
        process.stdout.write(`${s.name} (${redactUrl(url)}): applied ${r.applied.length ? r.applied.join(', ') : 'nothing new'}; ${r.alreadyApplied.length} already applied\n`);
      } catch (err) {
        process.stderr.write(`error: ${s.name}: ${redactUrl(errorText(err))}\n`);
        return 1;
      }
    }
    return 0;
  },
};
