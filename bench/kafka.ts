// Kafka end-to-end benchmark (npm run bench -- kafka): QoS 1, 200 B JSON payloads published
// through a real Mosquitto into a real Kafka broker (KRaft, the test harness's), measured in one run:
//   1. the MQTT delivery ceiling (bench/e2e.ts);
//   2. weir end to end, acks -1, idempotent producer, ack upstream after the broker's acknowledgement,
//      into a 6-partition topic keyed by device: msg/s from the first publish to the last append,
//      p50/p99 publish→append latency, weir's CPU and peak RSS, lost and duplicate records.
// Latency and rate come from the records themselves: the topic is created with
// message.timestamp.type=LogAppendTime, so each record's timestamp is the broker's append time,
// and the value carries the publish time (`ts`) the rule selected from the payload.
// Prints a table and writes bench/results/kafka.json.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startKafka } from '../test/harness/kafka.js';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { tempDir, waitFor } from '../test/harness/process.js';
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
import { createTopic, PARTITIONS, readTopic, TOPIC } from './kafka-topic.js';
import { writeResult } from './report.js';

const CONNECTIONS = 4;
const SIZE = 200;

/** Reads the whole topic back (`total` records at least); details the records of each timed run. */
async function readBack(brokers: string[], total: number, runs: TimedRun[]): Promise<ReadBack[]> {
  const tally = new ReadTally(runs);
  // LogAppendTime: each record's timestamp is the broker's.
  await readTopic(brokers, total, (v, appendedAt) => tally.add(v.device_id, v.seq, v.ts, appendedAt));
  return tally.result();
}

export async function benchKafka(): Promise<object> {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mq = await startMosquitto();
  const brokerPid = placeLoadListener(mq.port);
  const kafka = await startKafka();
  const dir = tempDir('bench-kafka');
  try {
    process.stdout.write(
      `kafka bench: ${ROUNDS} × ${MESSAGES} messages of ${SIZE} B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections, ${PARTITIONS} partitions\n  placement: ${placement()}\n`,
    );
    const ceiling = await CeilingSubscriber.start(mq.url, SIZE, CONNECTIONS, brokerPid);
    await createTopic(kafka.brokers);

    const clientId = 'bench-kafka';
    const files = messageSinkFiles({
      mqttUrl: mq.url,
      clientId,
      connections: CONNECTIONS,
      dir,
      sinkYaml: `    type: kafka\n    brokers: ${JSON.stringify(kafka.brokers)}`,
      actionYaml: `    topic: ${TOPIC}\n`,
    });
    const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL: 'warn' }, compiled: true, nodeArgs: weirNodeArgs() });
    await waitFor(() => weir.ready(), 60_000, 'weir ready');
    const { ceilings, runs } = await interleave(
      { weir, mqttUrl: mq.url, size: SIZE, brokerPid, serverPid: listenerPid(Number(kafka.brokers[0]!.split(':')[1])) },
      ceiling,
    );
    const total = await weir.metric('weir_sink_success_total');
    await weir.stop();
    await ceiling.close();
    await endSessions(mq.url, clientId, CONNECTIONS);
    const backs = await readBack(kafka.brokers, total, runs);

    const result = sinkResult('kafka', SIZE, ceilings, runs, backs, { partitions: PARTITIONS, compression: 'none' });
    writeResult('kafka', result);
    return result;
  } finally {
    await kafka.dispose();
    await mq.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
