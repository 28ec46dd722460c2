// Throughput of the Pulsar sink's protocol transport against the run's shared real broker: prints
// msg/s, weir's CPU and the event loop's utilization for zlib and for no compression, or for the
// codecs in WEIR_PULSAR_PERF_CODECS (e.g. lz4,zstd,snappy; docs/pulsar.md keeps the figures).
// The assertion is only a floor that catches a broken pipeline (one batch per receipt, lost pipelining), not a benchmark.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { silentLogger } from '../../src/log.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { pulsarSinkType } from '../../src/sinks/pulsar/index.js';
import { PulsarConfigSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import type { OutgoingMessage } from '../../src/sinks/pulsar/transport.js';
import type { Sink } from '../../src/sinks/types.js';
import { sharedPulsar } from '../harness/pulsar.js';

const N = Number(process.env.WEIR_PULSAR_PERF_N ?? 100_000);
const BATCH = 1000;
const IN_FLIGHT = 4;
const CODECS = (process.env.WEIR_PULSAR_PERF_CODECS ?? 'zlib,none').split(',') as PulsarConfig['compression'][];

describe('pulsar sink throughput (protocol transport, real broker)', { timeout: 300_000 }, () => {
  for (const compression of CODECS) {
    it(`writes ${N} messages of ~1 KB with ${compression}`, async () => {
      const b = await sharedPulsar();
      const topic = `persistent://public/default/weir-perf-${compression}-${Date.now()}`;
      const cfg = Value.Default(PulsarConfigSpec, {
        service_url: b.serviceUrl,
        admin_url: b.httpUrl,
        topic,
        create_topic: 'if_missing',
        partitions: 10,
        compression,
      }) as PulsarConfig;
      assert.ok(Value.Check(PulsarConfigSpec, cfg), `WEIR_PULSAR_PERF_CODECS: ${compression} is not a compression`);
      const sink = pulsarSinkType.create(cfg, { name: 'pulsar_perf', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
      await sink.connect(AbortSignal.timeout(30_000));
      const action = sink.bind({ key: '${clientid}' }, 'perf');
      const filler = 'telemetry-sample-'.repeat(60);
      const items = Array.from({ length: N }, (_, i) =>
        action.encode({
          record: { seq: i, device: `dev-${i % 500}`, ts: 1_700_000_000_000 + i, temp: 20 + (i % 97) / 10, data: `${i.toString(36)}-${filler}`.slice(0, 900) },
          event: { topic: 'device/x/telemetry', clientid: `dev-${i % 500}`, payload: '' },
          ruleId: 'perf',
        }),
      );
      const cpu0 = process.cpuUsage();
      const elu0 = performance.eventLoopUtilization();
      const t0 = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < N) {
          const from = next;
          next += BATCH;
          const r = await sink.write(items.slice(from, from + BATCH), AbortSignal.timeout(60_000));
          assert.deepEqual([r.rejected.length, r.retry.length], [0, 0], r.retryError?.message);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const elu = performance.eventLoopUtilization(elu0);
      await sink.close();
      const rate = Math.round((N / ms) * 1000);
      process.stderr.write(
        `pulsar.perf ${compression}: ${N} msgs in ${ms.toFixed(0)} ms = ${rate} msg/s, weir CPU ${(((cpu.user + cpu.system) / 1000 / ms) * 100).toFixed(0)}%, event loop ${(elu.utilization * 100).toFixed(0)}% busy\n`,
      );
      assert.equal((await countPulsarMessages(cfg)).total, N);
      assert.ok(rate > 5_000, `${rate} msg/s`);
    });
  }
});
