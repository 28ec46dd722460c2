// The mqtt (republish) sink in the conformance suite: a topic tree of its own on a Mosquitto of
// the adapter's own (persistent, with an ACL that denies publishing to <tree>/refused, so a record
// routed there is refused with PUBACK 0x87 while the others go through), read back by an MQTT 5
// subscriber of the test's own whose session was made before the sink wrote and is kept across a
// broker restart.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { type MosquittoBroker, startMosquitto } from '../../harness/mosquitto.js';
import { goodRecord, type SinkAdapter, type Target } from './adapter.js';

/** Mosquitto 2.0.11 drops a client whose denied publish it meets with max_queued_messages 0: a limit, far above what a case queues. */
const BROKER = { acl: ['topic readwrite #', 'topic deny +/refused'], persistence: true, maxQueuedMessages: 1_000_000 };

let shared: Promise<MosquittoBroker> | undefined;
function sharedBroker(): Promise<MosquittoBroker> {
  shared ??= startMosquitto(BROKER).then((b) => {
    b.unref();
    process.once('exit', () => void b.stop());
    return b;
  });
  return shared;
}

/** A fresh topic tree on `broker`, and a subscriber to it (its session kept across restarts) collecting every `seq`. */
async function target(broker: MosquittoBroker): Promise<Target> {
  const tree = `conformance-${randomUUID()}`;
  const seqs: number[] = [];
  const reader = await mqtt.connectAsync(broker.url, {
    clientId: `reader-${tree}`,
    protocolVersion: 5,
    clean: false,
    properties: { sessionExpiryInterval: 3600 },
    reconnectPeriod: 100,
  });
  reader.on('message', (_topic, payload) => seqs.push((JSON.parse(payload.toString()) as { seq: number }).seq));
  await reader.subscribeAsync(`${tree}/#`, { qos: 1 });
  return {
    settings: { url: broker.url, publish_timeout_ms: 5_000, connect_timeout_ms: 1_000 },
    action: { topic: `${tree}/\${dev}`, qos: 1 },
    async stored(expected) {
      const until = Date.now() + 60_000;
      while (new Set(seqs).size < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      // A moment more for duplicates on their way.
      await new Promise((r) => setTimeout(r, 300));
      await reader.endAsync(true);
      return [...seqs];
    },
  };
}

export const mqttAdapter: SinkAdapter = {
  target: async () => target(await sharedBroker()),
  async ownService() {
    // A broker of its own: stopping the shared one would break every other test of the run.
    const broker = await startMosquitto(BROKER);
    return { service: broker, target: await target(broker) };
  },
  // Routed to <tree>/refused, which the broker's ACL denies: PUBACK 0x87 for that message alone.
  rejectable: (seq) => ({ ...goodRecord(seq), dev: 'refused' }),
  rejection: /0x87 Not authorized/,
};
