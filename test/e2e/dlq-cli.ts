// What the dead-letter tests (weir dlq, the console's) share: a weir on a table that refuses rows
// until the test fixes it, publishing the messages to dead-letter, and running `weir dlq` (never
// with a stack trace) with its --json list parsed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { query, telemetryFiles } from './fixtures.js';

export interface ListedLetter {
  id: string;
  rule_id: string;
  sink: string;
  reason: string;
  topic: string;
  attempts: number;
  replay_of?: string;
  replay?: { outcome: string; note?: string };
  error: string;
}

export async function publish(mqttUrl: string, messages: Array<{ topic: string; payload: Buffer | string }>): Promise<void> {
  const c = await mqtt.connectAsync(mqttUrl, { clientId: `dlq-pub-${process.pid}-${Date.now()}`, protocolVersion: 5, reconnectPeriod: 0 });
  for (const m of messages) await c.publishAsync(m.topic, m.payload, { qos: 1 });
  await c.endAsync();
}

export async function dlq(cfg: string, ...args: string[]) {
  const r = await runCli(['dlq', ...args, '-c', cfg]);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace from dlq ${args.join(' ')}:\n${r.stderr}`);
  return r;
}

export async function listed(cfg: string, ...args: string[]): Promise<ListedLetter[]> {
  const r = await dlq(cfg, 'list', '--json', '--limit', '1000', ...args);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as ListedLetter[];
}

/** A table of readings whose CHECK refuses a temperature of 50 or more, until the test drops `plausible`. */
export const READINGS_DDL =
  'CREATE TABLE readings (device_id text NOT NULL, seq bigint NOT NULL, temp double precision CONSTRAINT plausible CHECK (temp < 50), PRIMARY KEY (device_id, seq))';

/** The rule `readings` storing `<prefix>/<device>/reading` messages' seq and temp in READINGS_DDL's table. */
export function readingsRule(prefix: string): string {
  return `id: readings
sql: SELECT clientid AS device_id, payload.seq AS seq, payload.temp AS temp FROM "${prefix}/+/reading"
actions:
  - sink: tsdb
    table: readings
    columns: { device_id: '\${device_id}', seq: '\${seq}', temp: '\${temp}' }
`;
}

/**
 * A weir on one rule of the test's own (writing a table the test created with `ddl`), started on a
 * fresh database with `edit` applied to telemetryFiles' weir.yaml, and ready; the caller stops it
 * and ends its session (client id `clientId`-0).
 */
export async function startOnTable(clientId: string, ddl: string, rule: string, edit: (config: string) => string = (c) => c) {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  await query(pgUrl, ddl);
  const base = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: 1 });
  const weir: WeirProcess = await startWeir({ config: edit(base.config), rules: { 'rule.yaml': rule } });
  try {
    await waitFor(() => weir.ready(), 20_000, 'weir ready');
  } catch (err) {
    await weir.kill();
    throw err;
  }
  return { mqttUrl, pgUrl, weir, cfg: join(weir.dir, 'weir.yaml') };
}
