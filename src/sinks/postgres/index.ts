// The PostgreSQL/TimescaleDB sink type.
import { redactUrl } from '../../log.js';
import { MIGRATIONS_DIR } from '../../paths.js';
import type { SinkType } from '../types.js';
import { POSTGRES_CODES } from './errors.js';
import { countPostgres } from './count.js';
import { PgLetterStore } from './letter-store.js';
import { migrate } from './migrate.js';
import { PostgresSink } from './sink.js';
import { lintPostgresConfig, PostgresActionSpec, PostgresConfigSpec, type PostgresAction, type PostgresConfig } from './spec.js';
import { verifyPostgres } from './verify.js';

export const postgresSinkType: SinkType<PostgresConfig, PostgresAction> = {
  type: 'postgres',
  configSchema: PostgresConfigSpec,
  actionSchema: PostgresActionSpec,
  errorCodes: POSTGRES_CODES,
  lint: lintPostgresConfig,
  create: (cfg, deps) => new PostgresSink(cfg, deps),
  keepsLetters: () => true,
  letterStore: (cfg, deps) => new PgLetterStore(cfg.url, cfg.dead_letter_table, deps.name),
  count: (cfg, actions, ctx) => countPostgres(cfg, actions, ctx),
  sqlTables: { url: (cfg) => cfg.url, tableOf: (action) => action.table },
  async migrate(cfg, opts) {
    const r = await migrate(cfg.url, opts.dir ?? MIGRATIONS_DIR, {
      hypertables: cfg.hypertables,
      connectTimeoutMs: cfg.connect_timeout_ms,
      signal: opts.signal,
    });
    return { target: redactUrl(cfg.url), applied: [...r.applied, ...r.changed], alreadyApplied: r.alreadyApplied.length, notes: r.notes };
  },
  verify: verifyPostgres,
};
