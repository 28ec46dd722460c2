// What the weir dlq tests share: publishing the messages to dead-letter, and running `weir dlq`
// (never with a stack trace) with its --json list parsed.
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { runCli } from '../harness/weir.js';

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
