// One run of a message-sink benchmark (kafka, pulsar), the same steps for each: build weir, place
// this process on the measured side, start Mosquitto on the load side and the sink's server,
// start the ceiling's subscriber and weir, interleave their runs (interleave.ts), then read back
// what the sink's own system holds and write the result. What differs per sink is in `SinkServer`.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { endSessions, messageSinkFiles } from '../../test/e2e/fixtures.js';
import { benchBrokerVersion, startBenchMosquitto } from './broker.js';
import { tempDir, waitFor } from '../../test/harness/process.js';
import { ROOT, startWeir } from '../../test/harness/weir.js';
import { writeResult } from '../report.js';
import { CeilingSubscriber } from './ceiling.js';
import { interleave, type TimedRun } from './interleave.js';
import { listenerPid, placeLoadListener, placement, placeSelf } from './placement.js';
import type { ReadBack } from './read-back.js';
import { printOccupancy, sampleOccupancy } from './occupancy.js';
import { receivedByWeir } from './received.js';
import { sinkResult } from './results.js';
import { BATCH_YAML, DEVICES, MAX_UNACKED, MESSAGES, PUB_CLIENTS, QUIET_MS, ROUNDS, WEIR_LOG_LEVEL } from './settings.js';
import { weirNodeArgs } from './weir-config.js';

/** The sink's server, started for the benchmark, and how weir and the reader reach it. */
export interface SinkServer {
  /** The loopback port it listens on (its process is measured). */
  port: number;
  /** The sink's keys in weir.yaml besides batch and max_in_flight, one per line. */
  sink: string[];
  /** The action's keys besides sink and key, one per line. */
  action?: string[];
  /** The action takes no key (mqtt); others are keyed by device. */
  unkeyed?: boolean;
  /** Reads back the `total` messages weir stored (at least); the records of each timed run, and fields for the result. */
  readBack(total: number, runs: TimedRun[]): Promise<{ backs: ReadBack[]; extra: Record<string, unknown>; note?: string }>;
  dispose(): Promise<void>;
}

export interface MessageSinkBench {
  /** The benchmark's name: `npm run bench -- <name>`, bench/results/<name>.json. */
  name: string;
  /** Payload bytes. */
  size: number;
  /** weir's MQTT connections, and the ceiling subscriber's. */
  connections: number;
  /** How the sink is set up, for the header line (`6 partitions`). */
  describe: string;
  start(): Promise<SinkServer>;
}

export async function runMessageSinkBench(b: MessageSinkBench): Promise<object> {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mq = await startBenchMosquitto();
  const brokerPid = placeLoadListener(mq.port);
  const server = await b.start();
  const dir = tempDir(`bench-${b.name}`);
  try {
    process.stdout.write(
      `${b.name} bench: ${ROUNDS} × ${MESSAGES} messages of ${b.size} B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${b.connections} connections, ${b.describe}\n  placement: ${placement()}\n  broker: ${benchBrokerVersion()}\n`,
    );
    const ceiling = await CeilingSubscriber.start(mq.url, b.size, b.connections, brokerPid);
    const clientId = `bench-${b.name}`;
    const files = messageSinkFiles({
      mqttUrl: mq.url,
      clientId,
      connections: b.connections,
      shareGroup: 'bench',
      maxUnacked: MAX_UNACKED,
      broker: [`reconnect: { quiet_ms: ${QUIET_MS} }`],
      sink: [...server.sink, BATCH_YAML, 'max_in_flight: 4'],
      action: server.action,
      key: server.unkeyed ? null : undefined,
      ruleId: 'telemetry_bench',
      dir,
    });
    const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL }, compiled: true, nodeArgs: weirNodeArgs() });
    await waitFor(() => weir.ready(), 60_000, 'weir ready');
    const occupancy = sampleOccupancy(weir);
    const { ceilings, runs } = await interleave({ weir, mqttUrl: mq.url, size: b.size, brokerPid, serverPid: listenerPid(server.port) }, ceiling);
    const waits = await printOccupancy(occupancy);
    const total = await weir.metric('weir_sink_success_total');
    const received = await receivedByWeir(weir, runs);
    await weir.stop();
    await ceiling.close();
    await endSessions(mq.url, clientId, b.connections);
    const back = await server.readBack(total, runs);
    const result = sinkResult(b.name, b.size, ceilings, runs, back.backs, { ...back.extra, ...received, weir_occupancy: waits });
    if (back.note) process.stdout.write(`  ${back.note}\n`);
    writeResult(b.name, result);
    return result;
  } finally {
    await server.dispose();
    await mq.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
