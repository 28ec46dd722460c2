// weir under measurement: its files for a message-sink benchmark, edits to a fixture's config,
// and the Node options it runs with.
import { join } from 'node:path';
import type { WeirFiles } from '../../test/harness/weir.js';
import { BATCH_YAML, MAX_UNACKED } from './settings.js';

/**
 * weir's files for a message-sink benchmark: `connections` connections in one share group, the
 * sink `events` (its type-specific YAML in `sinkYaml`, indented by 4), batches as BATCH says,
 * 4 in flight, and one rule that sends every sample to it keyed by device (`actionYaml`
 * adds the action's own keys, indented by 4).
 */
export function messageSinkFiles(o: { mqttUrl: string; clientId: string; connections: number; dir: string; sinkYaml: string; actionYaml?: string }): WeirFiles {
  return {
    config: `
broker:
  url: ${o.mqttUrl}
  client_id: ${o.clientId}
  connections: ${o.connections}
  share_group: bench
  max_unacked: ${MAX_UNACKED}
  publisher_clientid: { topic_level: 2 }
sinks:
  events:
${o.sinkYaml}
    ${BATCH_YAML}
    max_in_flight: 4
dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      'bench.yaml': `
id: telemetry_bench
sql: |
  SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.temp AS temp,
         payload.hum AS humidity, payload.location AS location
  FROM "device/+/telemetry"
actions:
  - sink: events
    key: \${device_id}
${o.actionYaml ?? ''}`,
    },
  };
}

/**
 * `text` with `from` replaced by `to`; throws when `from` is not there, so a benchmark's config
 * edit cannot silently stop applying when the fixture it edits changes.
 */
export function replaceOnce(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`bench config edit: ${JSON.stringify(from)} not found in the fixture`);
  return text.replace(from, to);
}

/**
 * Node options for the weir under measurement: BENCH_CPU_PROF=<dir> writes a V8 CPU profile of
 * weir there when it exits (open it in Chrome DevTools, or summarise it with bench/profile.ts);
 * BENCH_NODE_ARGS adds any other (space-separated), to try V8 flags.
 */
export function weirNodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return [...(dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
}
