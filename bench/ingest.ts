// Ingest routes for ack-after-commit (npm run bench -- ingest): how many QoS 1 messages per second
// one connection takes when each PUBACK waits for a simulated batch commit of 20 ms.
//   a. mqtt.js with `customHandleAcks`: the ack callback is called when the batch commits;
//   b. weir's MqttSession (mqtt-packet codec): reads on, acks in order when the batch commits;
//   c. weir's MqttSession acking on receipt (the ceiling of one connection).
// Writes bench/results/ingest.json. The result decides docs/ingest.md.
import mqtt from 'mqtt';
import { Value } from '@sinclair/typebox/value';
import { BrokerSpec, type BrokerConfig } from '../src/config/schema.js';
import { MqttSession } from '../src/core/ingest/mqtt-session.js';
import { silentLogger } from '../src/log.js';
import { publishLoad } from '../test/harness/load/publisher.js';
import { startBenchMosquitto } from './e2e/broker.js';
import { machine, printTable, writeResult } from './report.js';

const COMMIT_MS = 20;
const SECONDS = 5;

/** Settles everything collected every COMMIT_MS, as a batch commit would. */
function committer() {
  let pending: Array<() => void> = [];
  const timer = setInterval(() => {
    const p = pending;
    pending = [];
    for (const f of p) f();
  }, COMMIT_MS);
  return { add: (f: () => void) => pending.push(f), stop: () => clearInterval(timer) };
}

async function measure(url: string, topic: string, subscribe: (onMsg: () => void) => Promise<() => Promise<void>>): Promise<number> {
  let count = 0;
  const close = await subscribe(() => count++);
  // Keep far more queued at the broker than any route can take in the window.
  const load = publishLoad({ url, clients: 4, devices: 10, size: 200, qos: 1, limit: 60_000, topic: `${topic}/%i`, clientIdPrefix: `${topic}-pub` });
  await new Promise((r) => setTimeout(r, 500));
  const start = count;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const rate = Math.round((count - start) / SECONDS);
  await close();
  await load.catch(() => undefined);
  return rate;
}

export async function benchIngest(): Promise<object> {
  const mq = await startBenchMosquitto();
  try {
    const mqttJs = await measure(mq.url, 'mqttjs', async (onMsg) => {
      const c = committer();
      const client = await mqtt.connectAsync(mq.url, {
        clientId: 'bench-mqttjs',
        clean: true,
        protocolVersion: 5,
        customHandleAcks: (_topic, _msg, _packet, done) => {
          onMsg();
          c.add(() => done(0));
        },
      });
      await client.subscribeAsync('mqttjs/#', { qos: 1 });
      return async () => {
        c.stop();
        await client.endAsync(true);
      };
    });
    const session = (ackOnReceive: boolean, topic: string) =>
      measure(mq.url, topic, async (onMsg) => {
        const c = committer();
        const cfg = Value.Default(BrokerSpec, {
          url: mq.url,
          client_id: `bench-${topic}`,
          connections: 1,
          share_group: '',
          max_unacked: 10_000,
        }) as BrokerConfig;
        const s = new MqttSession(
          cfg,
          0,
          (_m, settle) => {
            onMsg();
            if (ackOnReceive) settle.release();
            else c.add(() => settle.release());
          },
          silentLogger,
        );
        await s.setFilters([`${topic}/#`]);
        s.start();
        await s.whenConnected();
        return async () => {
          c.stop();
          await s.close(true);
        };
      });
    const weirDeferred = await session(false, 'deferred');
    const weirOnReceive = await session(true, 'onreceive');
    const result = {
      bench: 'ingest',
      command: 'npm run bench -- ingest',
      at: new Date().toISOString(),
      machine: machine(),
      commit_ms: COMMIT_MS,
      msgs_per_s_per_connection: { mqttjs_custom_handle_acks: mqttJs, weir_session_ack_after_commit: weirDeferred, weir_session_ack_on_receive: weirOnReceive },
    };
    printTable([
      { route: 'mqtt.js customHandleAcks, ack after 20 ms commit', 'msg/s': mqttJs },
      { route: 'weir MqttSession, ack after 20 ms commit', 'msg/s': weirDeferred },
      { route: 'weir MqttSession, ack on receipt', 'msg/s': weirOnReceive },
    ]);
    writeResult('ingest', result);
    return result;
  } finally {
    await mq.stop();
  }
}
