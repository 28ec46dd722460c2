// The `pulsar` sink of the standalone benchmark (bench/standalone.ts): the seeds' 003 scenario as
// bench/pulsar.ts runs it end to end (its rule, keyed by device, a 10-partition topic with zlib,
// weir's protocol transport, ack after the broker's send receipt, 1 KB payloads), on the real
// Pulsar standalone broker of the test harness (test/harness/pulsar.ts), here fed by the stand-in
// broker instead of Mosquitto. Pulsar runs on the stand-in's core (it inherits the benchmark
// process's placement). Afterwards every message is read back from the topic and counted, each
// device/seq once.
import { join } from 'node:path';
import { startPulsar } from '../test/harness/pulsar.js';
import { writeWeirFiles } from '../test/harness/weir.js';
import { messageSinkFiles } from '../test/e2e/fixtures.js';
import { BATCH_YAML, MAX_UNACKED } from './e2e/settings.js';
import { pulsarSinkLines, readTopic, SIZE } from './pulsar-scenario.js';
import type { ServiceSink } from './standalone.js';

export async function startPulsarSink(connections: number): Promise<ServiceSink> {
  const pulsar = await startPulsar();
  const topic = `persistent://public/default/standalone-${Date.now()}`;
  return {
    size: SIZE,
    config(dir, brokerUrl, httpPort) {
      const files = messageSinkFiles({
        mqttUrl: brokerUrl,
        clientId: 'standalone-pulsar',
        connections,
        shareGroup: 'bench',
        maxUnacked: MAX_UNACKED,
        sink: [...pulsarSinkLines(pulsar, topic), BATCH_YAML, 'max_in_flight: 4'],
        ruleId: 'telemetry_bench',
        dir,
      });
      writeWeirFiles(files, httpPort, dir);
      return join(dir, 'weir.yaml');
    },
    async stored(total) {
      const seen = new Set<string>();
      const read = await readTopic(pulsar.httpUrl, topic, total, (payload) => {
        const v = JSON.parse(payload.toString()) as { device_id: string; seq: number };
        seen.add(`${v.device_id}/${v.seq}`);
      });
      if (read !== seen.size) throw new Error(`pulsar: read ${read} messages back, ${read - seen.size} of them duplicates`);
      return seen.size;
    },
    dispose: () => pulsar.dispose(),
  };
}
