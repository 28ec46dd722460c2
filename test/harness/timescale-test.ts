// A test that needs the real TimescaleDB extension. Where the harness could not provide it
// (test/harness/timescaledb.ts says why), the test is reported as skipped with "not run" and the
// reason in its name, so it can never pass against plain PostgreSQL.
import { test, type TestContext } from 'node:test';
import type { TimescaledbAvailability } from './timescaledb.js';

export function timescaleTest(tsdb: TimescaledbAvailability, name: string, fn: (t: TestContext) => Promise<void>): void {
  if (tsdb.available) test(name, fn);
  else test(`${name} (not run: no TimescaleDB: ${tsdb.reason})`, { skip: `not run: ${tsdb.reason}` }, fn);
}
