// weir.yaml and rule texts for the end-to-end tests: the shipped telemetry rule against the
// harness's Mosquitto and PostgreSQL, with a fast retry policy.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import pg from 'pg';
import { ROOT, type WeirFiles } from '../harness/weir.js';

export interface Endpoints {
  mqttUrl: string;
  pgUrl: string;
  clientId?: string;
  /** Default: the client id, so tests never share a group by accident. */
  shareGroup?: string;
  connections?: number;
  maxPayloadBytes?: number;
  extra?: string;
}

export function telemetryFiles(e: Endpoints): WeirFiles {
  return {
    config: `
broker:
  url: ${e.mqttUrl}
  client_id: ${e.clientId ?? 'weir-test'}
  connections: ${e.connections ?? 2}
  share_group: ${e.shareGroup ?? e.clientId ?? 'weir-test'}
  max_unacked: 5000
  max_payload_bytes: ${e.maxPayloadBytes ?? 1048576}
  reconnect: { min_ms: 100, max_ms: 1000 }
  publisher_clientid: { topic_level: 2 }
sinks:
  tsdb:
    type: postgres
    url: ${e.pgUrl}
    connect_timeout_ms: 2000
    batch: { max_items: 1000, max_delay_ms: 10 }
    retry: { initial_ms: 100, max_ms: 1000 }
dead_letter: { sink: tsdb }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
migrate_on_start: true
${e.extra ?? ''}`,
    rules: { 'telemetry.yaml': readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8') },
  };
}

/**
 * A telemetry rule (id telemetry_to_tsdb) that stores `columns` of `sql`'s output in telemetry,
 * without ON CONFLICT: a message stored twice is a key violation, dead-lettered and counted, so a
 * test that edits rules during a run sees a duplicate rather than absorbing it.
 */
export function telemetryRule(
  columns: string[],
  sql = 'SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.temp AS temp, payload.hum AS humidity FROM "device/+/telemetry"',
): string {
  return `id: telemetry_to_tsdb
sql: |
  ${sql}
actions:
  - sink: tsdb
    table: telemetry
    columns:
${columns.map((c) => `      ${c}: \${${c}}`).join('\n')}
`;
}

/** Every telemetry sample's fields, keyed by device: what the message-sink tests and benchmarks send. */
export const TELEMETRY_TO_SINK_SQL = `SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.temp AS temp,
         payload.hum AS humidity, payload.location AS location
  FROM "device/+/telemetry"`;

/** What TELEMETRY_TO_SINK_SQL outputs for a sample, as the JSON text a message sink writes. */
export function telemetryRecord(device: string, sample: Buffer): string {
  const s = JSON.parse(sample.toString()) as { ts: number; seq: number; temp: number; hum: number; location: string };
  return JSON.stringify({ ts: s.ts, device_id: device, seq: s.seq, temp: s.temp, humidity: s.hum, location: s.location });
}

/**
 * weir's files for a message sink (Kafka, Pulsar): `connections` connections in one share group
 * (`shareGroup`, default the client id), publisher client ids from the topic, the sink `events`
 * with the keys in `sink` (one per line: its type's and the shared batch, retry, max_in_flight),
 * dead letters to a file in `dir`, and one rule `ruleId` that sends every sample to it keyed by
 * device (the action's other keys in `action`).
 */
export function messageSinkFiles(o: {
  mqttUrl: string;
  clientId: string;
  connections: number;
  shareGroup?: string;
  maxUnacked: number;
  /** More keys under `broker:`, one per line. */
  broker?: string[];
  sink: string[];
  action?: string[];
  /** The action's key; null for a sink type that takes none (mqtt). Default `${device_id}`. */
  key?: string | null;
  ruleId: string;
  dir: string;
}): WeirFiles {
  const indent = (lines: string[] | undefined, n: number) => (lines ?? []).map((l) => `${' '.repeat(n)}${l}\n`).join('');
  return {
    config: `
broker:
  url: ${o.mqttUrl}
  client_id: ${o.clientId}
  connections: ${o.connections}
  share_group: ${o.shareGroup ?? o.clientId}
  max_unacked: ${o.maxUnacked}
${indent(o.broker, 2)}  publisher_clientid: { topic_level: 2 }
sinks:
  events:
${indent(o.sink, 4)}dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      [`${o.ruleId}.yaml`]: `
id: ${o.ruleId}
sql: |
  ${TELEMETRY_TO_SINK_SQL}
actions:
  - sink: events
${o.key === null ? '' : `    key: ${o.key ?? '${device_id}'}\n`}${indent(o.action, 4)}`,
    },
  };
}

/**
 * Ends the broker sessions of a weir that a test is done with. A share group keeps dealing
 * messages to a member whose session is alive, even offline: a killed test instance would
 * otherwise strand later tests' messages in its queue.
 */
export async function endSessions(mqttUrl: string, clientId: string, connections = 2): Promise<void> {
  for (let i = 0; i < connections; i++) {
    const c = await mqtt.connectAsync(mqttUrl, {
      clientId: `${clientId}-${i}`,
      clean: true,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 0 },
      reconnectPeriod: 0,
    });
    await c.endAsync();
  }
}

/**
 * Whether the broker has a session for `clientId`: a client resuming it is told session_present.
 * The probe connects with session expiry 0, so it ends a session it finds: ask where none should be.
 */
export async function sessionPresent(mqttUrl: string, clientId: string): Promise<boolean> {
  const c = mqtt.connect(mqttUrl, { clientId, clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 0 }, reconnectPeriod: 0 });
  try {
    return await new Promise<boolean>((resolve, reject) => {
      c.once('connect', (connack) => resolve(connack.sessionPresent));
      c.once('error', reject);
    });
  } finally {
    await c.endAsync();
  }
}

export async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

export async function countRows(url: string, table = 'telemetry'): Promise<number> {
  try {
    const [r] = await query<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`);
    return Number(r!.n);
  } catch {
    return 0;
  }
}
