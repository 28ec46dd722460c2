// The Pulsar sink against a real Pulsar standalone broker (test/harness/pulsar.ts): zlib, lz4,
// zstd and snappy batches into 10-partition topics read back by an independent reader (the
// broker's WebSocket reader API, i.e. the Java client inside the broker decompresses and splits
// the batches), the broker's partitioned-stats counters, on the run's shared broker. (A broker
// outage under the core's runner is a case of the sink conformance suite,
// test/sinks/conformance.int.test.ts.)
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import WebSocket from 'ws';
import { silentLogger } from '../../src/log.js';
import type { RuleEvent } from '../../src/rules/index.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { pulsarSinkType } from '../../src/sinks/pulsar/index.js';
import { PulsarConfigSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import type { OutgoingMessage } from '../../src/sinks/pulsar/transport.js';
import type { Sink, SinkInput } from '../../src/sinks/types.js';
import { sharedPulsar, type PulsarEndpoints } from '../harness/pulsar.js';

let broker: PulsarEndpoints;

before(
  async () => {
    broker = await sharedPulsar();
  },
  { timeout: 240_000 },
);

function sinkConfig(topic: string, over: Partial<PulsarConfig> = {}): PulsarConfig {
  const cfg = Value.Default(PulsarConfigSpec, {
    service_url: broker.serviceUrl,
    admin_url: broker.httpUrl,
    topic,
    create_topic: 'if_missing',
    partitions: 10,
    compression: 'zlib',
    connect_timeout_ms: 3_000,
    ...over,
  }) as PulsarConfig;
  assert.ok(Value.Check(PulsarConfigSpec, cfg));
  return cfg;
}

interface ReadMessage {
  partition: number;
  payload: Buffer;
  key: string | undefined;
  properties: Record<string, string>;
  eventTime: string | undefined;
}

/** Reads every partition from the earliest message with the broker's WebSocket reader until `expected` arrived. */
async function readAll(topic: string, partitions: number, expected: number, timeoutMs = 60_000): Promise<ReadMessage[]> {
  const out: ReadMessage[] = [];
  const sockets: WebSocket[] = [];
  const path = topic.replace('://', '/');
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${expected} messages within ${timeoutMs} ms`)), timeoutMs);
      for (let p = 0; p < partitions; p++) {
        const ws = new WebSocket(`${broker.httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${path}-partition-${p}?messageId=earliest&receiverQueueSize=2000`);
        sockets.push(ws);
        ws.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as {
            messageId: string;
            payload: string;
            key?: string;
            properties?: Record<string, string>;
            eventTime?: string;
          };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          out.push({ partition: p, payload: Buffer.from(m.payload, 'base64'), key: m.key, properties: m.properties ?? {}, eventTime: m.eventTime });
          if (out.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        });
      }
    });
  } finally {
    for (const ws of sockets) ws.terminate();
  }
  return out;
}

function input(i: number, device: string | undefined): SinkInput {
  const event: RuleEvent = { topic: `device/${device ?? 'anon'}/telemetry`, clientid: device, payload: Buffer.from('{}'), timestamp: 1_700_000_000_000 + i };
  // ~1 KB of JSON with a repetitive part (telemetry compresses well) and a unique part.
  return {
    record: { seq: i, device: device ?? null, temp: 20 + (i % 50) / 10, tags: 'abcdefghij'.repeat(95), nonce: Math.random().toString(36) },
    event,
    ruleId: 'r1',
  };
}

async function writeAll(sink: Sink<unknown, OutgoingMessage>, items: OutgoingMessage[], batchSize: number): Promise<void> {
  for (let i = 0; i < items.length; i += batchSize) {
    const r = await sink.write(items.slice(i, i + batchSize), AbortSignal.timeout(30_000));
    assert.deepEqual([r.rejected.length, r.retry.length], [0, 0], `batch at ${i}: ${r.retryError?.message ?? ''}`);
  }
}

describe('pulsar sink against a real broker (protocol transport)', { timeout: 300_000 }, () => {
  it('writes zlib batches to a 10-partition topic: every message read back byte-identical, keys ordered in one partition, counters match', async () => {
    const topic = `persistent://public/default/weir-int-${Date.now()}`;
    const sink = pulsarSinkType.create(sinkConfig(topic), { name: 'pulsar_it', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
    await sink.connect(AbortSignal.timeout(30_000));
    const action = sink.bind({ key: '${clientid}', properties: { seq: '${seq}', topic: '${topic}' }, event_time: '${timestamp}' }, 'r1');
    const keyless = sink.bind({ properties: { seq: '${seq}' } }, 'r2');
    const N = 5_000;
    const items: OutgoingMessage[] = [];
    for (let i = 0; i < N; i++) {
      // 4 of 5 messages come from 40 devices (keyed), 1 of 5 has no key (round-robin).
      items.push(i % 5 === 4 ? keyless.encode(input(i, undefined)) : action.encode(input(i, `dev-${i % 40}`)));
    }
    const t0 = Date.now();
    await writeAll(sink, items, 500);
    const writeMs = Date.now() - t0;
    await sink.probe(AbortSignal.timeout(5_000));
    await sink.close();

    const read = await readAll(topic, 10, N);
    assert.equal(read.length, N, 'no message lost or duplicated');
    const bySeq = new Map<number, ReadMessage>();
    for (const m of read) bySeq.set(Number(m.properties.seq), m);
    assert.equal(bySeq.size, N);
    for (let i = 0; i < N; i++) {
      const m = bySeq.get(i);
      assert.ok(m, `message ${i} read back`);
      assert.ok(m.payload.equals(items[i]!.payload), `payload ${i} byte-identical`);
    }
    const perPartition = new Array(10).fill(0) as number[];
    for (const m of read) perPartition[m.partition]!++;
    assert.ok(
      perPartition.every((n) => n > 0),
      `every partition used: ${perPartition.join(',')}`,
    );
    const partitionOfKey = new Map<string, number>();
    const lastSeqOfKey = new Map<string, number>();
    for (const m of read) {
      if (m.key === undefined) continue;
      const p = partitionOfKey.get(m.key);
      if (p === undefined) partitionOfKey.set(m.key, m.partition);
      else assert.equal(m.partition, p, `key ${m.key} stays in partition ${p}`);
    }
    // Per partition the reader delivers in log order: within a key, seq must increase.
    for (const m of read) {
      if (m.key === undefined) continue;
      const seq = Number(m.properties.seq);
      assert.ok(seq > (lastSeqOfKey.get(m.key) ?? -1), `key ${m.key} in order`);
      lastSeqOfKey.set(m.key, seq);
    }
    assert.equal(partitionOfKey.size, 32); // devices whose number is 4 mod 5 only ever send on the keyless slot
    assert.equal(read.find((m) => m.properties.seq === '3')?.properties.topic, 'device/dev-3/telemetry');
    assert.ok(read.find((m) => m.properties.seq === '3')?.eventTime, 'event time set');

    const count = await countPulsarMessages(sinkConfig(topic));
    assert.equal(count.total, N);
    assert.deepEqual(
      count.partitions.map((p) => p.count),
      perPartition,
    );
    const stats = (await (await fetch(`${broker.httpUrl}/admin/v2/persistent/${topic.slice('persistent://'.length)}/partitioned-stats`)).json()) as {
      bytesInCounter: number;
      storageSize: number;
    };
    const raw = items.reduce((s, m) => s + m.payload.length, 0);
    assert.ok(stats.storageSize > 0 && stats.storageSize < raw / 2, `stored ${stats.storageSize} bytes for ${raw} raw: zlib took effect`);
    process.stderr.write(`pulsar.int: ${N} msgs written in ${writeMs} ms; raw ${raw} B, stored ${stats.storageSize} B\n`);
  });

  // The broker's WebSocket reader decompresses with pulsar-common's Java codecs (airlift's LZ4,
  // zstd and snappy raw codecs), so a byte-identical read-back proves the wire format.
  for (const compression of ['lz4', 'zstd', 'snappy'] as const) {
    it(`writes ${compression} batches that the broker-side Java client decompresses byte-identical`, async () => {
      const topic = `persistent://public/default/weir-${compression}-${Date.now()}`;
      const cfg = sinkConfig(topic, { compression });
      const sink = pulsarSinkType.create(cfg, { name: 'pulsar_it', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
      await sink.connect(AbortSignal.timeout(30_000));
      const action = sink.bind({ key: '${clientid}', properties: { seq: '${seq}' } }, 'r1');
      const items = Array.from({ length: 1000 }, (_, i) => action.encode(input(i, `dev-${i % 11}`)));
      await writeAll(sink, items, 250);
      await sink.close();
      const read = await readAll(topic, 10, items.length);
      assert.equal(read.length, items.length);
      assert.equal(new Set(read.map((m) => m.properties.seq)).size, items.length, 'no duplicates');
      for (const m of read) assert.ok(m.payload.equals(items[Number(m.properties.seq)]!.payload), `payload ${m.properties.seq}`);
      const stats = (await (await fetch(`${broker.httpUrl}/admin/v2/persistent/${topic.slice('persistent://'.length)}/partitioned-stats`)).json()) as {
        storageSize: number;
      };
      const raw = items.reduce((s, m) => s + m.payload.length, 0);
      assert.ok(stats.storageSize < raw / 2, `stored ${stats.storageSize} of ${raw}: ${compression} took effect`);
    });
  }

  it('writes everything with max_pending far below the write size (backpressure without deadlock)', async () => {
    const topic = `persistent://public/default/weir-pending-${Date.now()}`;
    const cfg = sinkConfig(topic, { max_pending: 7, batching: { max_messages: 3, max_bytes: 131072, max_delay_ms: 2 } });
    const sink = pulsarSinkType.create(cfg, { name: 'pulsar_it', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
    await sink.connect(AbortSignal.timeout(30_000));
    const action = sink.bind({ key: '${clientid}', properties: { seq: '${seq}' } }, 'r1');
    const items = Array.from({ length: 700 }, (_, i) => action.encode(input(i, `dev-${i % 13}`)));
    await Promise.all([writeAll(sink, items.slice(0, 350), 350), writeAll(sink, items.slice(350), 350)]);
    await sink.close();
    assert.equal((await countPulsarMessages(cfg)).total, 700);
  });

  it('dead-letters a message over the broker limit, keeps batches of large messages under it, writes the rest', async () => {
    const topic = `persistent://public/default/weir-big-${Date.now()}`;
    const cfg = sinkConfig(topic, { compression: 'none', batching: { max_messages: 1000, max_bytes: 4 * 1024 * 1024, max_delay_ms: 5 } });
    const sink = pulsarSinkType.create(cfg, { name: 'pulsar_it', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
    await sink.connect(AbortSignal.timeout(30_000));
    const action = sink.bind({ properties: { seq: '${seq}' }, payload: '${blob}' }, 'r1');
    const item = (i: number, blob: string | Buffer) => action.encode({ record: { seq: i, blob }, event: { topic: 't', payload: '' }, ruleId: 'r1' });
    const large = (i: number) => Buffer.alloc(2.6 * 1024 * 1024, 0x30 + i);
    // Each 2.6 MiB message fits the 5 MiB limit alone; the producer starts a new batch rather than
    // pass max_bytes (4 MiB) with both (this broker happened to accept a 5.2 MiB frame too).
    const items = [item(0, 'small-0'), item(1, Buffer.alloc(6 * 1024 * 1024, 1)), item(2, 'small-2'), item(3, large(3)), item(4, large(4))];
    const r = await sink.write(items, AbortSignal.timeout(30_000));
    assert.deepEqual(r.retry, [], r.retryError?.message);
    assert.equal(r.rejected.length, 1);
    assert.equal(r.rejected[0]!.index, 1);
    assert.equal(sink.classify(r.rejected[0]!.error), 'reject');
    await sink.close();
    const read = await readAll(topic, 10, 4);
    assert.deepEqual(read.map((m) => m.properties.seq).sort(), ['0', '2', '3', '4']);
    for (const m of read) assert.ok(m.payload.equals(items[Number(m.properties.seq)]!.payload));
  });
});
