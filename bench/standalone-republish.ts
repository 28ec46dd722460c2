// The mqtt (republish) and http (webhook) sinks of the standalone benchmark (bench/standalone.ts,
// STANDALONE_SINKS=mqtt or http): weir alone behind the stand-in broker, its shipped rule's one
// action replaced by a republish to a real Mosquitto of the harness (mqtt: topic
// alerts/<device>, QoS 1, the whole output record as JSON, counted at its PUBACK), or by a
// json_array POST per batch to a webhook server in this process (http). Both on the stand-in's
// core, as PostgreSQL is. The shipped sink's batching (2,000 items or 20 ms, 4 batches in
// flight). Dead letters go to a file; the benchmark checks there are none. Afterwards, what the
// subscriber (mqtt) or the server (http) received is counted: every message must be there.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { startWebhookServer } from '../test/harness/webhook-server.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT } from '../test/harness/weir.js';
import type { ServiceSink } from './standalone.js';

interface ShippedConfig {
  sinks: Record<string, { batch?: unknown; max_in_flight?: unknown }>;
  dead_letter?: unknown;
}

/** weir.yaml and the shipped rule with `action` as its one action, into `dir`. */
function writeConfig(dir: string, sink: Record<string, unknown>, action: Record<string, unknown>): string {
  const shipped = parseYaml(readFileSync(join(ROOT, 'weir.yaml'), 'utf8')) as ShippedConfig;
  const { batch, max_in_flight } = shipped.sinks.tsdb!;
  const config = { ...shipped, sinks: { out: { ...sink, batch, max_in_flight } }, dead_letter: { file: join(dir, 'dead-letters.jsonl') } };
  const rule = parseYaml(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')) as { actions: unknown[] };
  rule.actions = [{ sink: 'out', ...action }];
  mkdirSync(join(dir, 'rules'), { recursive: true });
  writeFileSync(join(dir, 'rules', 'telemetry.yaml'), stringifyYaml(rule));
  writeFileSync(join(dir, 'weir.yaml'), stringifyYaml(config));
  return join(dir, 'weir.yaml');
}

/** How many distinct device/seq pairs `seen` holds once it stops growing, up to `total`. */
async function settled(seen: Set<string>, total: number): Promise<number> {
  await waitFor(() => seen.size >= total, 60_000, `${total} messages received (${seen.size} so far)`).catch(() => undefined);
  return seen.size;
}

export async function standaloneRepublish(): Promise<ServiceSink> {
  const broker = await startMosquitto();
  const seen = new Set<string>();
  const sub = await mqtt.connectAsync(broker.url, { clientId: 'bench-republish-reader', protocolVersion: 5, clean: true, reconnectPeriod: 0 });
  sub.on('message', (_t, payload) => {
    const v = JSON.parse(payload.toString()) as { device_id: string; seq: number };
    seen.add(`${v.device_id}/${v.seq}`);
  });
  await sub.subscribeAsync('alerts/#', { qos: 1 });
  return {
    config: (dir) => writeConfig(dir, { type: 'mqtt', url: broker.url }, { topic: 'alerts/${device_id}', qos: 1 }),
    stored: (total) => settled(seen, total),
    async dispose() {
      await sub.endAsync(true);
      await broker.dispose();
    },
  };
}

export async function standaloneWebhook(): Promise<ServiceSink> {
  const seen = new Set<string>();
  const server = await startWebhookServer((req) => {
    for (const r of req.records) seen.add(`${String(r.device_id)}/${String(r.seq)}`);
    return { status: 200 };
  });
  // The server keeps every request for the tests' checks; here only `seen` counts.
  const keepNothing = setInterval(() => {
    server.requests.length = 0;
    server.stored.length = 0;
  }, 1000);
  return {
    config: (dir) => writeConfig(dir, { type: 'http', url: `${server.url}/ingest` }, { format: 'json_array' }),
    stored: (total) => settled(seen, total),
    async dispose() {
      clearInterval(keepNothing);
      await server.dispose();
    },
  };
}
