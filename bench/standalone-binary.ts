// Binary payloads for the standalone bench (STANDALONE_PAYLOAD, bench/standalone.ts):
//   protobuf   the shipped rule's sample (device, seq, ts, temp, hum, location) as a 200 B Protobuf
//              message, decoded by schema_decode into the same telemetry columns;
//   sparkplug  a Sparkplug B DDATA of 20 metrics sent by alias only, after each device's DBIRTH
//              named them; a FOREACH rule stores one row per metric (spb_metric), so CPU is given
//              per row as well.
// Each writes weir.yaml (the shipped one with `schemas:`) and its rule into the run's directory.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { SchemaRegistry } from '../src/schemas/registry.js';
import { SparkplugAliases } from '../src/schemas/sparkplug-aliases.js';
import { tempDir } from '../test/harness/process.js';
import { ROOT } from '../test/harness/weir.js';

export interface BinaryPayload {
  /** Rows each data message becomes. */
  readonly rowsPerMsg: number;
  /** Messages to send (and have stored) before the runs: Sparkplug's births. */
  births(devices: number): Array<{ topic: string; payload: Buffer }>;
  /** Rows the births become. */
  birthRows(devices: number): number;
  message(device: number, seq: number, ts: number): { topic: string; payload: Buffer };
  /** weir.yaml and rules/ for this payload in `dir`; returns weir.yaml's path. */
  config(dir: string): string;
  /** DDL of its table, where it is not the shipped telemetry. */
  readonly ddl?: string;
}

const TELEMETRY_PROTO = `syntax = "proto3";
message Telemetry { string device = 1; uint64 seq = 2; int64 ts = 3; double temp = 4; double hum = 5; string location = 6; }
`;

const METRICS = 20;

/** The shipped weir.yaml with `schemas:`, and one rule, in `dir`. */
function writeConfig(dir: string, schemas: Record<string, unknown>, rule: Record<string, unknown>): string {
  const config = parseYaml(readFileSync(join(ROOT, 'weir.yaml'), 'utf8')) as Record<string, unknown>;
  config.schemas = schemas;
  config.rules_dir = './rules';
  mkdirSync(join(dir, 'rules'), { recursive: true });
  writeFileSync(join(dir, 'weir.yaml'), stringifyYaml(config));
  writeFileSync(join(dir, 'rules', 'bench.yaml'), stringifyYaml(rule));
  return join(dir, 'weir.yaml');
}

function protobufPayload(size: number): BinaryPayload {
  const dir = tempDir('bench-proto-');
  writeFileSync(join(dir, 'telemetry.proto'), TELEMETRY_PROTO);
  const { registry } = SchemaRegistry.load(
    { telemetry: { type: 'protobuf', file: 'telemetry.proto', message_type: 'Telemetry' } },
    dir,
    new SparkplugAliases(),
  );
  const shipped = parseYaml(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')) as Record<string, unknown>;
  return {
    rowsPerMsg: 1,
    births: () => [],
    birthRows: () => 0,
    message(device, seq, ts) {
      const temp = Math.round((15 + ((seq * 7919) % 300) / 10) * 10) / 10 + 0.05;
      const hum = Math.round((30 + ((seq * 104729) % 500) / 10) * 10) / 10 + 0.05;
      const sample = { device: String(device), seq, ts, temp, hum, location: '' };
      const bare = registry.encode('telemetry', sample, undefined).length;
      // The location pads the message to `size` bytes (its length prefix is one byte up to 127).
      sample.location = 'x'.repeat(Math.max(0, size - bare - 2));
      return { topic: `device/${device}/telemetry`, payload: registry.encode('telemetry', sample, undefined) };
    },
    config(runDir) {
      writeFileSync(join(runDir, 'telemetry.proto'), TELEMETRY_PROTO);
      return writeConfig(
        runDir,
        { telemetry: { type: 'protobuf', file: 'telemetry.proto', message_type: 'Telemetry' } },
        {
          ...shipped,
          tests: undefined,
          payload_format: 'raw',
          sql: `SELECT schema_decode('telemetry', payload) AS p, p.ts AS ts, clientid AS device_id, p.seq AS seq, p.temp AS temp, p.hum AS humidity, p.location AS location
FROM "device/+/telemetry"`,
        },
      );
    },
  };
}

function sparkplugPayload(): BinaryPayload {
  const { registry } = SchemaRegistry.load({}, tempDir('bench-spb-'), new SparkplugAliases());
  const topic = (kind: string, device: number) => `spBv1.0/bench/${kind}/edge${device % 100}/dev${device}`;
  return {
    rowsPerMsg: METRICS,
    births: (devices) =>
      Array.from({ length: devices }, (_, d) => ({
        topic: topic('DBIRTH', d),
        payload: registry.spbEncode({
          timestamp: 1,
          seq: 0,
          metrics: Array.from({ length: METRICS }, (_, m) => ({ name: `line/sensor_${m}`, alias: m + 1, datatype: 10, double_value: 0.5, timestamp: 1 })),
        }),
      })),
    birthRows: (devices) => devices * METRICS,
    message(device, seq, ts) {
      return {
        topic: topic('DDATA', device),
        payload: registry.spbEncode({
          timestamp: ts,
          seq: seq % 256,
          metrics: Array.from({ length: METRICS }, (_, m) => ({ alias: m + 1, datatype: 10, double_value: seq + m / 8 + 0.25, timestamp: ts })),
        }),
      };
    },
    ddl: 'CREATE TABLE spb_metric (edge text NOT NULL, device text NOT NULL, metric text NOT NULL, value float8, ts bigint NOT NULL, seq int NOT NULL)',
    config(runDir) {
      return writeConfig(
        runDir,
        {},
        {
          id: 'spb_metrics',
          payload_format: 'raw',
          sql: `FOREACH spb_decode(payload) AS p, split(topic, '/') AS t, p.metrics AS m
DO t[4] AS edge, t[5] AS device, m.name AS metric, m.double_value AS value, m.timestamp AS ts, p.seq AS seq
FROM "spBv1.0/bench/+/+/+"`,
          actions: [
            {
              sink: 'tsdb',
              table: 'spb_metric',
              columns: { edge: '${edge}', device: '${device}', metric: '${metric}', value: '${value}', ts: '${ts}', seq: '${seq}' },
            },
          ],
        },
      );
    },
  };
}

/** The payload STANDALONE_PAYLOAD names, or undefined for the shipped JSON rule. */
export function binaryPayload(kind: string, size: number): BinaryPayload | undefined {
  if (kind === 'json') return undefined;
  if (kind === 'protobuf') return protobufPayload(size);
  if (kind === 'sparkplug') return sparkplugPayload();
  throw new Error(`STANDALONE_PAYLOAD: json, protobuf or sparkplug, not ${kind}`);
}
