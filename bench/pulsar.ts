// Pulsar end-to-end benchmark (npm run bench -- pulsar), the seeds' 003 scenario: QoS 1, 1 KB JSON
// payloads published through a real Mosquitto into a 10-partition zlib topic on a real Pulsar
// standalone broker (the test harness's), measured in one run:
//   1. the MQTT delivery ceiling (bench/e2e.ts);
//   2. weir end to end with ack after the broker's send receipt, keyed by device: msg/s from the
//      first publish to the last publish_time, p50/p99 latency, weir's CPU and peak RSS, lost and
//      duplicate messages, and the topic's stored size against the raw payload total.
// Latency is MQTT publish (`ts` in the payload, selected by the rule) → publish_time, which weir's
// producer stamps when it seals a batch for sending; the broker's receipt for that batch follows
// within one round trip, which this figure leaves out. Every message is read back through the
// broker's WebSocket reader API (the Java client inside the broker decompresses the batches).
// Prints a table and writes bench/results/pulsar.json.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { tempDir, waitFor } from '../test/harness/process.js';
import { startPulsar } from '../test/harness/pulsar.js';
import { ROOT, startWeir } from '../test/harness/weir.js';
import { endSessions } from '../test/e2e/fixtures.js';
import {
  CeilingSubscriber,
  DEVICES,
  interleave,
  listenerPid,
  MESSAGES,
  messageSinkFiles,
  placeLoadListener,
  placement,
  placeSelf,
  PUB_CLIENTS,
  ReadTally,
  ROUNDS,
  sinkResult,
  weirNodeArgs,
  type ReadBack,
  type TimedRun,
} from './e2e.js';
import { PARTITIONS, pulsarSinkYaml, readTopic, SIZE } from './pulsar-scenario.js';
import { writeResult } from './report.js';

const CONNECTIONS = 4;
const TOPIC = 'persistent://public/default/telemetry';

/**
 * Reads every message back (bench/pulsar-read-back.ts) and details those of each timed run; also
 * sums every payload read, to set against the topic's storage size.
 */
async function readBack(httpUrl: string, total: number, runs: TimedRun[]): Promise<{ backs: ReadBack[]; rawBytes: number }> {
  const tally = new ReadTally(runs);
  let rawBytes = 0;
  await readTopic(httpUrl, TOPIC, PARTITIONS, total, (payload, publishTime) => {
    const v = JSON.parse(payload.toString()) as { device_id: string; seq: number; ts: number };
    rawBytes += payload.length;
    tally.add(v.device_id, v.seq, v.ts, publishTime);
  });
  return { backs: tally.result(), rawBytes };
}

export async function benchPulsar(): Promise<object> {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mq = await startMosquitto();
  const brokerPid = placeLoadListener(mq.port);
  const pulsar = await startPulsar();
  const dir = tempDir('bench-pulsar');
  try {
    process.stdout.write(
      `pulsar bench: ${ROUNDS} × ${MESSAGES} messages of ${SIZE} B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections, ${PARTITIONS} partitions, zlib\n  placement: ${placement()}\n`,
    );
    const ceiling = await CeilingSubscriber.start(mq.url, SIZE, CONNECTIONS, brokerPid);

    const clientId = 'bench-pulsar';
    const files = messageSinkFiles({
      mqttUrl: mq.url,
      clientId,
      connections: CONNECTIONS,
      dir,
      sinkYaml: pulsarSinkYaml(pulsar, TOPIC),
    });
    const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL: 'warn' }, compiled: true, nodeArgs: weirNodeArgs() });
    await waitFor(() => weir.ready(), 60_000, 'weir ready');
    const { ceilings, runs } = await interleave(
      { weir, mqttUrl: mq.url, size: SIZE, brokerPid, serverPid: listenerPid(Number(new URL(pulsar.serviceUrl).port)) },
      ceiling,
    );
    const total = await weir.metric('weir_sink_success_total');
    await weir.stop();
    await ceiling.close();
    await endSessions(mq.url, clientId, CONNECTIONS);
    const back = await readBack(pulsar.httpUrl, total, runs);
    const stats = (await (await fetch(`${pulsar.httpUrl}/admin/v2/persistent/${TOPIC.slice('persistent://'.length)}/partitioned-stats`)).json()) as {
      storageSize: number;
    };

    const result = sinkResult('pulsar', SIZE, ceilings, runs, back.backs, {
      partitions: PARTITIONS,
      compression: 'zlib',
      raw_bytes: back.rawBytes,
      stored_bytes: stats.storageSize,
    });
    process.stdout.write(`  ${(back.rawBytes / 1e6).toFixed(1)} MB of payloads stored as ${(stats.storageSize / 1e6).toFixed(1)} MB\n`);
    writeResult('pulsar', result);
    return result;
  } finally {
    await pulsar.dispose();
    await mq.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
