// The PostgreSQL/TimescaleDB sink's settings: the single source of their names, defaults and docs.
import { Type, type Static } from '@sinclair/typebox';
import { urlProblem } from '../../config/url-check.js';
import type { SettingProblem } from '../types.js';

export const PostgresConfigSpec = Type.Object(
  {
    url: Type.String({
      description: 'libpq connection URL. Put the password in an ${ENV} variable; it is never logged.',
      examples: ['postgres://weir:${PG_PASSWORD}@timescaledb:5432/telemetry'],
    }),
    pool_size: Type.Integer({ minimum: 1, maximum: 200, default: 4, description: 'Connections in the pool; at least max_in_flight so every flush gets one.' }),
    insert_mode: Type.Union([Type.Literal('unnest'), Type.Literal('values')], {
      default: 'unnest',
      description: 'unnest: one statement with one array parameter per column (fastest measured, see bench/results/pg.json). values: multi-row VALUES.',
    }),
    statement_timeout_ms: Type.Integer({ minimum: 0, default: 30_000, description: 'Server-side limit per statement; 0 = none.' }),
    connect_timeout_ms: Type.Integer({ minimum: 0, default: 5_000, description: 'How long opening a connection may take before it fails (and is retried); 0 = no limit.' }),
    dead_letter_table: Type.String({ default: 'weir_dead_letter', description: 'Table of dead letters, when this sink is the dead-letter store (created by weir migrate).' }),
    ledger: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      default: 'on',
      description: 'on: every batch also adds its committed row count to weir_ledger, in the same statement, for weir reconcile (created by weir migrate).',
    }),
    application_name: Type.String({ default: 'weir', description: 'Shown for these connections in pg_stat_activity and the server log.' }),
  },
  { additionalProperties: false },
);
export type PostgresConfig = Static<typeof PostgresConfigSpec>;

export const PostgresActionSpec = Type.Object(
  {
    table: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$', description: 'Target table, optionally schema-qualified.', examples: ['telemetry'] }),
    columns: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String(), {
      minProperties: 1,
      description: 'Column → ${path} template over the rule output (then the event). Missing values become NULL.',
      examples: [{ ts: '${timestamp}', device_id: '${clientid}', temp: '${temp}' }],
    }),
    on_conflict: Type.Optional(
      Type.String({
        pattern: '^\\s*(\\([^;]*\\)|ON\\s+CONSTRAINT\\s+\\w+)?\\s*DO\\s+(NOTHING|UPDATE\\s+SET\\s+[^;]+)\\s*$',
        description: 'Appended as ON CONFLICT <this>: makes redelivered messages idempotent.',
        examples: ['(device_id, ts, seq) DO NOTHING'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type PostgresAction = Static<typeof PostgresActionSpec>;

/**
 * What the schema cannot check: that url names a server. pg (pg-connection-string) resolves a
 * string that is not a URL against postgres://base/, so 'not a url' would dial a host named
 * "base" for ever; a Unix socket is a host= query parameter (or pg's socket:/dir?db=name).
 */
export function lintPostgresConfig(cfg: PostgresConfig): SettingProblem[] {
  const problem = urlProblem(cfg.url, {
    schemes: ['postgres:', 'postgresql:', 'socket:'],
    expected: 'postgres:// or postgresql://',
    example: 'postgres://weir:${PG_PASSWORD}@timescaledb:5432/telemetry (a Unix socket: postgres:///telemetry?host=/var/run/postgresql)',
    hostless: (u) => u.searchParams.has('host') || (u.protocol === 'socket:' && u.pathname.length > 1),
  });
  return problem ? [{ path: ['url'], value: cfg.url, message: problem, code: 'config.invalid_url' }] : [];
}
