// The PostgreSQL/TimescaleDB sink's settings: the single source of their names, defaults and docs.
import { Type, type Static } from '@sinclair/typebox';
import { TemplateString } from '../../config/common-spec.js';
import { urlProblem } from '../../config/url-check.js';
import type { SettingProblem } from '../types.js';

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';
const TABLE = `^${IDENT}(\\.${IDENT})?$`;

/** A PostgreSQL interval of one unit, as TimescaleDB's policies take it ('1 day', '6 hours'). */
const Interval = (description: string, examples: string[], dflt?: string) =>
  Type.String({ pattern: '^\\s*[0-9]+\\s*(minutes?|hours?|days?|weeks?|months?|years?)\\s*$', description, examples, ...(dflt ? { default: dflt } : {}) });

/**
 * What `weir migrate` makes of one table where the timescaledb extension is there
 * (docs/timescaledb.md). The keys with defaults are optional here and defaulted by hypertables.ts:
 * TypeBox's Value.Default does not reach into the values of a Record.
 */
export const HypertableSpec = Type.Object(
  {
    time_column: Type.Optional(Type.String({ pattern: `^${IDENT}$`, default: 'ts', description: 'The timestamptz column the table is partitioned by.' })),
    chunk_interval: Type.Optional(
      Interval(
        'Time range of one chunk; a changed value applies to chunks created from then on. Size it so the recent chunks of all hypertables fit in about a quarter of memory.',
        ['1 day', '6 hours'],
        '7 days',
      ),
    ),
    compression: Type.Optional(
      Type.Object(
        {
          segment_by: Type.Optional(
            Type.Array(Type.String({ pattern: `^${IDENT}$` }), {
              default: [],
              description: 'Columns whose rows are compressed together (usually the device id).',
              examples: [['device_id']],
            }),
          ),
          order_by: Type.Optional(
            Type.Array(Type.String({ pattern: `^${IDENT}(\\s+(ASC|DESC|asc|desc))?$` }), {
              default: [],
              description: 'Order inside a compressed segment; empty: the time column descending.',
              examples: [['ts DESC']],
            }),
          ),
          compress_after: Interval('Chunks whose data is older than this are compressed by the policy job.', ['7 days']),
        },
        {
          additionalProperties: false,
          description: 'Columnar compression of old chunks; left out, weir removes a compression policy it finds (compressed chunks stay compressed).',
        },
      ),
    ),
    retention: Type.Optional(
      Type.Object(
        { drop_after: Interval('Chunks whose data is older than this are dropped by the policy job.', ['90 days']) },
        { additionalProperties: false, description: 'Dropping old chunks; left out, weir removes a retention policy it finds.' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type HypertableSettings = Static<typeof HypertableSpec>;

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
    connect_timeout_ms: Type.Integer({
      minimum: 0,
      default: 5_000,
      description: 'How long opening a connection may take before it fails (and is retried); 0 = no limit.',
    }),
    dead_letter_table: Type.String({
      default: 'weir_dead_letter',
      description: 'Table of dead letters, when this sink is the dead-letter store (created by weir migrate).',
    }),
    ledger: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      default: 'on',
      description: 'on: every batch also adds its committed row count to weir_ledger, in the same statement, for weir reconcile (created by weir migrate).',
    }),
    application_name: Type.String({ default: 'weir', description: 'Shown for these connections in pg_stat_activity and the server log.' }),
    hypertables: Type.Optional(
      Type.Record(Type.String({ pattern: TABLE }), HypertableSpec, {
        description:
          'Tables weir migrate makes TimescaleDB hypertables, with their chunk interval, compression and retention policies, applied idempotently where the timescaledb extension is available (docs/timescaledb.md).',
        examples: [
          {
            telemetry: {
              chunk_interval: '1 day',
              compression: { segment_by: ['device_id'], order_by: ['ts DESC'], compress_after: '7 days' },
              retention: { drop_after: '90 days' },
            },
          },
        ],
      }),
    ),
  },
  { additionalProperties: false },
);
export type PostgresConfig = Static<typeof PostgresConfigSpec>;

export const PostgresActionSpec = Type.Object(
  {
    table: Type.String({ pattern: TABLE, description: 'Target table, optionally schema-qualified.', examples: ['telemetry'] }),
    columns: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), TemplateString(), {
      minProperties: 1,
      description: 'Column → ${path} template: a name the rule selects is read from its output, another from the event fields. Missing values become NULL.',
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
  const problems: SettingProblem[] = problem ? [{ path: ['url'], value: cfg.url, message: problem, code: 'config.invalid_url' }] : [];
  for (const [table, h] of Object.entries(cfg.hypertables ?? {})) {
    const compressAfter = h.compression && intervalHours(h.compression.compress_after);
    const dropAfter = h.retention && intervalHours(h.retention.drop_after);
    if (compressAfter !== undefined && dropAfter !== undefined && dropAfter <= compressAfter) {
      problems.push({
        path: ['hypertables', table, 'retention', 'drop_after'],
        value: h.retention!.drop_after,
        message: `drop_after must be longer than compression.compress_after (${h.compression!.compress_after}): chunks would be dropped before they are compressed`,
      });
    }
  }
  return problems;
}

const HOURS: Record<string, number> = { minute: 1 / 60, hour: 1, day: 24, week: 168, month: 720, year: 8760 };

/** An Interval's length in hours (a month as 30 days), for comparing two settings. */
export function intervalHours(interval: string): number {
  const m = /^\s*([0-9]+)\s*([a-z]+?)s?\s*$/.exec(interval)!;
  return Number(m[1]) * HOURS[m[2]!]!;
}
