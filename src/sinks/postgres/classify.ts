// PostgreSQL errors → what the core does with them, by SQLSTATE class (Appendix A of the
// PostgreSQL manual), in one place.
import { WeirError } from '../../errors.js';
import { NODE_TRANSIENT } from '../node-errors.js';
import type { ErrorClass } from '../types.js';

export function classifyPgError(err: unknown): ErrorClass {
  // weir's own errors carry their class in the catalogue (src/error-codes.ts, ./errors.ts).
  if (err instanceof WeirError) return err.errorClass;
  const e = err as { code?: string; message?: string };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (NODE_TRANSIENT.has(code)) return 'retry';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    switch (code.slice(0, 2)) {
      // 22 data exception (bad value for the column type), 23 integrity constraint (NOT NULL,
      // CHECK, UNIQUE without ON CONFLICT): this row will never go in. Dead-letter it.
      // 54 program limit exceeded (a value nested past max_stack_depth, too many columns or
      // arguments): this input will exceed it again; a smaller batch may not, so it is split.
      // 0A feature not supported (an older TimescaleDB refusing ON CONFLICT DO UPDATE into a
      // compressed chunk): the server will refuse it the same way every time; splitting the batch
      // dead-letters only the rows it refuses, instead of retrying them for ever.
      case '22':
      case '23':
      case '54':
      case '0A':
        return 'reject';
      // 08 connection exception, 53 insufficient resources, 57 operator intervention (shutdown,
      // cannot connect now), 40 serialization failure/deadlock, 58 system error: try again.
      case '08':
      case '53':
      case '57':
      case '40':
      case '58':
        return 'retry';
      // 28 invalid authorization, 3D no such database, 42 syntax or access rule (missing table
      // or column, no privilege): an operator must act; the core keeps retrying slowly.
      case '28':
      case '3D':
      case '42':
        return 'fatal';
      default:
        return 'retry';
    }
  }
  // pg's own errors when the server goes away mid-query.
  if (/Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(e?.message ?? ''))
    return 'retry';
  return 'retry';
}

/**
 * What an operator must fix for an error classifyPgError calls fatal, by SQLSTATE class, so the
 * log says "schema error" rather than only the server's words.
 */
export function pgFatalKind(err: unknown): string {
  if (err instanceof WeirError) return err.code === 'sink.postgres.unknown_column' ? 'schema error' : 'fatal error';
  const code = String((err as { code?: unknown })?.code ?? '');
  // 42501 insufficient_privilege is class 42 too, but a grant fixes it, not a migration.
  if (code === '42501') return 'permission error';
  switch (code.slice(0, 2)) {
    // 42P01 undefined table, 42703 undefined column, 42804 a column type that cannot take the
    // value's type, 42P10 an ON CONFLICT target without a matching unique index…
    case '42':
      return 'schema error';
    case '28':
      return 'authentication error';
    case '3D':
      return 'no such database';
    default:
      return 'fatal error';
  }
}
