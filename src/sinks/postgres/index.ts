// The PostgreSQL/TimescaleDB sink type.
import type { SinkType } from '../types.js';
import { countPostgres } from './count.js';
import { PgLetterStore } from './letter-store.js';
import { PostgresSink } from './sink.js';
import { lintPostgresConfig, PostgresActionSpec, PostgresConfigSpec, type PostgresAction, type PostgresConfig } from './spec.js';

export const postgresSink: SinkType<PostgresConfig, PostgresAction> = {
  type: 'postgres',
  configSchema: PostgresConfigSpec,
  actionSchema: PostgresActionSpec,
  lint: lintPostgresConfig,
  create: (cfg, deps) => new PostgresSink(cfg, deps),
  letterStore: (cfg, deps) => new PgLetterStore(cfg.url, cfg.dead_letter_table, deps.name),
  count: (cfg, actions, ctx) => countPostgres(cfg, actions, ctx),
  sqlUrl: (cfg) => cfg.url,
};
