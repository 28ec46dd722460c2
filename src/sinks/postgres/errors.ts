// The PostgreSQL sink's error codes: what each means, its class (what weir does with it) and what the
// operator should do. The sinks' section of docs/errors.md is generated from these
// (src/sinks/error-catalogue.ts composes them with the core's); PostgresError raises them and reads its
// class here.
import { type ErrorInfo, SINK_RETRIES_ACTION } from '../../error-codes.js';
import { sinkError } from '../../errors.js';

export const POSTGRES_CODES = {
  'sink.postgres.not_connected': { class: 'retry', meaning: 'a write before the pool exists', action: SINK_RETRIES_ACTION },
  'sink.postgres.unknown_column': {
    class: 'fatal',
    meaning: 'an action maps a column the table does not have',
    action: "add the column (a migration) or change the rule's columns",
  },
} as const satisfies Record<string, ErrorInfo>;

export type PostgresErrorCode = keyof typeof POSTGRES_CODES;

declare module '../../error-codes.js' {
  interface SinkErrorCodes extends Record<PostgresErrorCode, true> {}
}

/** An error of the PostgreSQL sink, with one of its codes. */
export class PostgresError extends sinkError(POSTGRES_CODES) {}
