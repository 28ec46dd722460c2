// Pulsar end-to-end benchmark (npm run bench -- pulsar), the seeds' 003 scenario: QoS 1, 1 KB JSON
// payloads published through a real Mosquitto into a 10-partition zlib topic on a real Pulsar
// standalone broker (the test harness's), measured in one run:
//   1. the MQTT delivery ceiling (bench/e2e/ceiling.ts);
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
import WebSocket from 'ws';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { tempDir, waitFor } from '../test/harness/process.js';
import { startPulsar } from '../test/harness/pulsar.js';
import { ROOT, startWeir } from '../test/harness/weir.js';
import { endSessions } from '../test/e2e/fixtures.js';
import { CeilingSubscriber } from './e2e/ceiling.js';
import { interleave, type TimedRun } from './e2e/interleave.js';
import { listenerPid, placeLoadListener, placement, placeSelf } from './e2e/placement.js';
import { type ReadBack, ReadTally } from './e2e/read-back.js';
import { sinkResult } from './e2e/results.js';
import { DEVICES, MESSAGES, PUB_CLIENTS, ROUNDS } from './e2e/settings.js';
import { messageSinkFiles, weirNodeArgs } from './e2e/weir-config.js';
import { writeResult } from './report.js';

const CONNECTIONS = 4;
const SIZE = 1024;
const PARTITIONS = 10;
const TOPIC = 'persistent://public/default/telemetry';

/**
 * Reads every partition from the earliest message until `total` arrived, then 1 s more
 * (duplicates); details the messages of each timed run. Also sums every payload read, to set against the topic's storage size.
 * Fails when nothing arrives for `stallMs`: the reader API delivers about 8,000 msg/s here, so a
 * fixed deadline would fail long runs (5,050,000 messages) that are still reading.
 */
async function readBack(httpUrl: string, total: number, runs: TimedRun[], stallMs = 60_000): Promise<{ backs: ReadBack[]; rawBytes: number }> {
  const tally = new ReadTally(runs);
  let rawBytes = 0;
  const sockets: WebSocket[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let lastRead = -1;
      timer = setInterval(() => {
        if (tally.read === lastRead) reject(new Error(`read ${tally.read} of ${total} messages, then nothing for ${stallMs} ms`));
        lastRead = tally.read;
      }, stallMs);
      let done = false;
      for (let p = 0; p < PARTITIONS; p++) {
        const ws = new WebSocket(
          `${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${TOPIC.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=5000`,
        );
        sockets.push(ws);
        ws.on('error', reject);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; payload: string; publishTime: string };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          const payload = Buffer.from(m.payload, 'base64');
          const v = JSON.parse(payload.toString()) as { device_id: string; seq: number; ts: number };
          rawBytes += payload.length;
          tally.add(v.device_id, v.seq, v.ts, Date.parse(m.publishTime));
          if (!done && tally.read >= total) {
            done = true;
            setTimeout(resolve, 1_000);
          }
        });
      }
    });
  } finally {
    clearInterval(timer);
    for (const ws of sockets) ws.terminate();
  }
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
      sinkYaml: [
        `type: pulsar`,
        `service_url: ${pulsar.serviceUrl}`,
        `admin_url: ${pulsar.httpUrl}`,
        `topic: ${TOPIC}`,
        'create_topic: if_missing',
        `partitions: ${PARTITIONS}`,
        'compression: zlib',
      ]
        .map((l) => `    ${l}`)
        .join('\n'),
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
