// The Pulsar driver (protocol transport) under the core's real SinkRunner — batching, max in
// flight, backoff, readiness, counters — against a REAL Pulsar broker stopped mid-stream and started
// again: nothing lost, retries counted, readiness down while it is down and up after. The
// MQTT → weir → Pulsar path is the integrator's end-to-end test; this pins the driver's half.
//   node --import tsx --test test/sinks/pulsar-runner.int.test.ts
// WEIR_PULSAR_OUTAGE_MS sets how long the broker stays down (default 15 s; the acceptance
// run uses 30 s).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import WebSocket from 'ws';
import type { SinkConfig } from '../../src/config/load.js';
import { DeadLetterQueue, fileDeadLetterWriter } from '../../src/core/dead-letter.js';
import type { Outcome } from '../../src/core/ack-path.js';
import { SinkRunner } from '../../src/core/sink-runner.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, ruleCounters } from '../../src/metrics/names.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { pulsarSink } from '../../src/sinks/pulsar/index.js';
import { PulsarActionSpec, PulsarConfigSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import { startPulsar, type PulsarBroker } from '../harness/pulsar.js';
import { tempDir } from '../harness/process.js';

const OUTAGE_MS = Number(process.env.WEIR_PULSAR_OUTAGE_MS ?? 15_000);
const PARTITIONS = 10;

/** A counter's total over its labels, read from the Prometheus text as a scraper would. */
async function counter(registry: { metrics(): Promise<string> }, name: string): Promise<number> {
  let sum = 0;
  for (const line of (await registry.metrics()).split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * Every `seq` property on the topic, from the broker's WebSocket reader (one per partition): reads
 * until `expected` distinct seqs arrived and then 2 s more, so duplicates (at-least-once) are
 * counted too.
 */
async function readSeqs(httpUrl: string, topic: string, expected: number): Promise<number[]> {
  const seqs: number[] = [];
  const distinct = new Set<number>();
  let done = false;
  const sockets: WebSocket[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${distinct.size} of ${expected} distinct seqs (${seqs.length} messages)`)), 90_000);
      for (let p = 0; p < PARTITIONS; p++) {
        const ws = new WebSocket(`${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${topic.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=2000`);
        sockets.push(ws);
        ws.on('error', reject);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; properties?: Record<string, string> };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          const seq = Number(m.properties?.seq);
          seqs.push(seq);
          distinct.add(seq);
          if (!done && distinct.size >= expected) {
            done = true;
            clearTimeout(timer);
            setTimeout(resolve, 2_000);
          }
        });
      }
    });
  } finally {
    for (const ws of sockets) ws.terminate();
  }
  return seqs;
}

describe('pulsar sink under the core sink runner', { timeout: 400_000 }, () => {
  let broker: PulsarBroker | undefined;
  after(async () => {
    await broker?.dispose();
  });

  it(`loses nothing when the broker is down for ${OUTAGE_MS / 1000} s mid-stream`, async (t) => {
    // Each phase's time on stderr, so a run that times out shows where it stood (one CI run did).
    const t0 = Date.now();
    const phase = (what: string) => process.stderr.write(`pulsar-runner: ${what} after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    broker = await startPulsar();
    phase('broker started');
    const topic = `persistent://public/default/outage-${Date.now()}`;
    const metrics = createMetrics();
    const stop = new AbortController();
    const dir = tempDir('pulsar-runner');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const settings = Value.Default(PulsarConfigSpec, {
      service_url: broker.serviceUrl, admin_url: broker.httpUrl, topic, create_topic: 'if_missing', partitions: PARTITIONS,
      compression: 'zlib', send_timeout_ms: 5_000, connect_timeout_ms: 2_000,
    }) as PulsarConfig;
    const cfg: SinkConfig = {
      name: 'pulsar',
      type: pulsarSink,
      batch: { max_items: 500, max_bytes: 4 * 1024 * 1024, max_delay_ms: 20 },
      retry: { initial_ms: 100, max_ms: 1_000, multiplier: 2, max_attempts: 0 },
      max_in_flight: 4,
      settings: settings as unknown as Record<string, unknown>,
    };
    const sink = pulsarSink.create(settings, { name: 'pulsar', log: silentLogger });
    const dlq = new DeadLetterQueue(fileDeadLetterWriter(join(dir, 'dead.jsonl')), cfg.retry, metrics, silentLogger, stop.signal, join(dir, 'fallback.jsonl'));
    const runner = new SinkRunner(cfg, sink, dlq, metrics, silentLogger, stop.signal);
    await runner.connect();
    assert.equal(runner.ready, true);
    const handle = runner.bind('r1', Value.Default(PulsarActionSpec, { key: '${dev}', properties: { seq: '${seq}' } }) as Record<string, unknown>, ruleCounters(metrics, 'r1'));

    const N = 30_000;
    const outcomes: Outcome[] = [];
    let allDone!: () => void;
    const finished = new Promise<void>((r) => (allDone = r));
    const enqueue = (i: number): void => {
      const record = { seq: i, dev: `dev-${i % 200}`, v: Math.sin(i), pad: 'x'.repeat(200) };
      runner.enqueue(handle, record, { topic: `device/dev-${i % 200}/telemetry`, payload: JSON.stringify(record) }, 256, {
        itemDone: (o) => {
          outcomes.push(o);
          if (outcomes.length === N) allDone();
        },
      });
    };

    // 500 records every 50 ms; the broker stops a second in.
    let sent = 0;
    const stream = (async () => {
      while (sent < N) {
        for (let j = 0; j < 500 && sent < N; j++) enqueue(sent++);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    await broker.stop();
    phase('broker stopped');
    const downAt = Date.now();
    let downSeen = false;
    while (Date.now() - downAt < OUTAGE_MS) {
      await runner.probe();
      if (!runner.ready) downSeen = true;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(downSeen, 'readiness went down while the broker was stopped');
    const storedBefore = outcomes.length;
    await broker.start();
    phase('broker started again');
    await stream;
    await finished;
    phase(`all ${N} records ended`);
    await runner.flush();
    await runner.probe();
    assert.equal(runner.ready, true, 'readiness is back');

    assert.equal(outcomes.filter((o) => o === 'stored').length, N, 'every record stored, none dead-lettered');
    const retried = await counter(metrics.registry, 'weir_sink_retried_total');
    assert.ok(retried > 0, 'retries were counted');
    assert.equal(await counter(metrics.registry, 'weir_sink_success_total'), N);

    // The broker's counters restarted with it; the reader sees the whole topic.
    const sinceRestart = (await countPulsarMessages(settings)).total;
    const seqs = await readSeqs(broker.httpUrl, topic, N);
    phase('topic read back');
    const unique = new Set(seqs);
    for (let i = 0; i < N; i++) assert.ok(unique.has(i), `seq ${i} is in the topic`);
    t.diagnostic(`outage ${OUTAGE_MS} ms: ${N} records, ${storedBefore} stored before the restart, ${retried} item retries, ${seqs.length - N} duplicates read, ${sinceRestart} counted by the broker since its restart`);
    stop.abort();
    await runner.close();
  });
});
