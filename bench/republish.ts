// Republish end-to-end benchmark (npm run bench -- republish): QoS 1, 200 B JSON payloads published
// through the benchmarks' Mosquitto into weir, whose mqtt sink republishes each rule output at QoS 1
// to a second Mosquitto (the sink's server: `url` set, as for an alerts broker), measured in one run
// as for Kafka and Pulsar (bench/e2e/interleave.ts):
//   1. the MQTT delivery ceiling (bench/e2e/ceiling.ts);
//   2. weir end to end, acking upstream only at the second broker's PUBACK: msg/s from the first
//      publish to the last republished message read, p50/p99 publish → read latency, weir's CPU
//      and peak RSS, lost and duplicate messages.
// Why a second broker: republishing into the broker weir reads from doubles that broker's work on
// the load side, and the ratio would then measure Mosquitto, not weir. The second Mosquitto runs on
// the measured core, as Kafka's and Pulsar's servers do.
// A broker keeps no messages to read back afterwards, so the reader subscribes before weir starts
// and reads as the messages come (QoS 1, weir's own MQTT reader, as the ceiling's subscriber),
// keeping each payload and its receive time ("stored") to parse once the runs are over: on the
// measured core it only receives and acknowledges, as the ceiling's subscriber does. Prints a
// table, writes bench/results/republish.json.
import { Value } from '@sinclair/typebox/value';
import { type BrokerConfig, BrokerSpec } from '../src/config/schema.js';
import { MqttSession } from '../src/core/ingest/mqtt-session.js';
import { silentLogger } from '../src/log.js';
import { type MosquittoBroker, startMosquitto } from '../test/harness/mosquitto.js';
import { builtMosquitto } from '../test/harness/mosquitto-build.js';
import { waitFor } from '../test/harness/process.js';
import type { TimedRun } from './e2e/interleave.js';
import { runMessageSinkBench } from './e2e/message-sink-bench.js';
import { ReadTally } from './e2e/read-back.js';

const TOPIC_PREFIX = 'republished';

/** What arrives on the second broker: device, seq, publish time and receive time of each message. */
class Reader {
  /** Each message's payload and receive time, parsed only in tally(): not on the measured core's time. */
  private readonly payloads: Buffer[] = [];
  private readonly times: number[] = [];

  private constructor(private readonly session: MqttSession) {}

  static async start(url: string): Promise<Reader> {
    const cfg = Value.Default(BrokerSpec, { url, client_id: 'bench-republish-reader', connections: 1, max_unacked: 10_000 }) as BrokerConfig;
    let reader: Reader | undefined;
    const session = new MqttSession(
      cfg,
      0,
      (m, settle) => {
        reader?.payloads.push(m.payload);
        reader?.times.push(m.receivedAt);
        settle.release();
      },
      silentLogger,
    );
    reader = new Reader(session);
    await session.setFilters([`${TOPIC_PREFIX}/#`]);
    session.start();
    await session.whenConnected();
    return reader;
  }

  get count(): number {
    return this.times.length;
  }

  /** Waits for `total` messages (then 1 s more, for duplicates) and tallies the timed runs'. */
  async tally(total: number, runs: TimedRun[]) {
    await waitFor(() => this.count >= total, 120_000, `${total} republished messages read from the second broker`);
    await new Promise((r) => setTimeout(r, 1_000));
    const tally = new ReadTally(runs);
    for (const [i, payload] of this.payloads.entries()) {
      const v = JSON.parse(payload.toString()) as { device_id: string; seq: number; ts: number };
      tally.add(v.device_id, v.seq, v.ts, this.times[i]!);
    }
    return tally.result();
  }

  close(): Promise<void> {
    return this.session.close(true);
  }
}

export function benchRepublish(): Promise<object> {
  return runMessageSinkBench({
    name: 'republish',
    size: 200,
    connections: 4,
    describe: 'republished at QoS 1 to a second Mosquitto',
    async start() {
      const target: MosquittoBroker = await startMosquitto({ bin: process.env.BENCH_MOSQUITTO === 'debian' ? undefined : await builtMosquitto() });
      const reader = await Reader.start(target.url);
      return {
        port: Number(new URL(target.url).port),
        sink: ['type: mqtt', `url: ${target.url}`, ...(process.env.BENCH_MQTT_WINDOW ? [`max_in_flight_messages: ${process.env.BENCH_MQTT_WINDOW}`] : [])],
        action: [`topic: ${TOPIC_PREFIX}/\${device_id}`, 'qos: 1'],
        unkeyed: true,
        async readBack(total, runs) {
          const backs = await reader.tally(total, runs);
          return {
            backs,
            extra: { target: 'a second Mosquitto', qos: 1, messages_read: reader.count, weir_sink_success: total },
            note: `${reader.count} messages read from the second broker, ${total} republished by weir's count`,
          };
        },
        async dispose() {
          await reader.close();
          await target.stop();
        },
      };
    },
  });
}
