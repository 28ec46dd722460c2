// What the Kafka and Pulsar end-to-end tests share: the load whose every output they expect, the
// checks of what they read back, and the counters of a clean run.
import assert from 'node:assert/strict';
import { telemetrySample } from '../../src/embedded/devices.js';
import { telemetryRecord } from '../e2e/fixtures.js';
import { type PublishResult, publishLoad } from '../harness/load/publisher.js';
import type { WeirProcess } from '../harness/weir.js';

export const DEVICES = 1000;

/**
 * Publishes `n` telemetry samples of `size` bytes (QoS 1, 10 clients over DEVICES devices);
 * `expected` maps each `device/seq` to the record the rule makes of it (messageSinkFiles' rule).
 */
export async function publishExpected(mqttUrl: string, n: number, size: number, clientIdPrefix: string) {
  const expected = new Map<string, string>();
  const pub: PublishResult = await publishLoad({
    url: mqttUrl,
    clients: 10,
    devices: DEVICES,
    size,
    qos: 1,
    limit: n,
    clientIdPrefix,
    payloadFor: (device, seq) => {
      const p = telemetrySample(String(device), seq, size);
      expected.set(`${device}/${seq}`, telemetryRecord(String(device), p));
      return p;
    },
  });
  return { pub, expected };
}

/** A record read back: its partition, key and value, in the partition's log order. */
export interface ReadRecord {
  partition: number;
  key: string | undefined;
  value: Buffer;
}

/**
 * Each record is one `expected` output, byte for byte, keyed by its device, and every expected
 * output was read exactly once; each device's records are in one partition, in publish order;
 * every one of `partitions` partitions was used. `read` is in log order within each partition.
 */
export function assertAsPublished(read: ReadRecord[], expected: Map<string, string>, partitions: number): void {
  const left = new Map(expected);
  const byDevice = new Map<string, ReadRecord[]>();
  for (const r of read) {
    const v = JSON.parse(r.value.toString()) as { device_id: string; seq: number };
    const want = left.get(`${v.device_id}/${v.seq}`);
    assert.ok(want !== undefined, `record ${v.device_id}/${v.seq} was published, and read once`);
    assert.ok(r.value.equals(Buffer.from(want)), `record ${v.device_id}/${v.seq} is byte-identical to the rule's output`);
    assert.equal(r.key, v.device_id);
    left.delete(`${v.device_id}/${v.seq}`);
    let l = byDevice.get(v.device_id);
    if (!l) byDevice.set(v.device_id, (l = []));
    l.push(r);
  }
  assert.equal(left.size, 0, 'every published message is a record');
  assert.equal(byDevice.size, DEVICES);
  const used = new Set<number>();
  for (const [device, rs] of byDevice) {
    assert.equal(new Set(rs.map((r) => r.partition)).size, 1, `device ${device} in one partition`);
    used.add(rs[0]!.partition);
    const seqs = rs.map((r) => (JSON.parse(r.value.toString()) as { seq: number }).seq);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `device ${device} in order`);
  }
  assert.equal(used.size, partitions, 'every partition used');
}

/** weir stored all `n` through the sink `events` and rule `ruleId`, holds nothing, dead-lettered nothing, and exits 0 on SIGTERM. */
export async function assertCleanRun(weir: WeirProcess, n: number, ruleId: string): Promise<void> {
  assert.equal(await weir.metric('weir_sink_success_total', 'sink="events"'), n);
  assert.equal(await weir.metric('weir_rule_passed_total', `rule="${ruleId}"`), n);
  assert.equal(await weir.metric('weir_ingest_unacked'), 0);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0);
  assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
}
