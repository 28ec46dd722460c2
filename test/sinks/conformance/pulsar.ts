// The pulsar sink in the conformance suite: a 2-partition topic of its own (created by the sink,
// create_topic: if_missing), read back with the broker's WebSocket reader, one per partition.
import WebSocket from 'ws';
import { sharedPulsar, startPulsar, type PulsarEndpoints } from '../../harness/pulsar.js';
import { goodRecord, type SinkAdapter, type Target } from './adapter.js';

const PARTITIONS = 2;
let topics = 0;

/** Every `seq` property on the topic: until `expected` distinct ones arrived and 1 s more (for duplicates), or 60 s. */
async function readSeqs(httpUrl: string, topic: string, expected: number): Promise<number[]> {
  const seqs: number[] = [];
  const distinct = new Set<number>();
  const sockets: WebSocket[] = [];
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 60_000);
      for (let p = 0; p < PARTITIONS; p++) {
        const ws = new WebSocket(
          `${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${topic.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=2000`,
        );
        sockets.push(ws);
        ws.on('error', () => undefined);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; properties?: Record<string, string> };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          const seq = Number(m.properties?.seq);
          seqs.push(seq);
          distinct.add(seq);
          if (distinct.size === expected) {
            clearTimeout(timer);
            setTimeout(resolve, 1_000);
          }
        });
      }
    });
  } finally {
    for (const ws of sockets) ws.terminate();
  }
  return seqs;
}

function target(broker: PulsarEndpoints): Target {
  const topic = `persistent://public/default/conformance-${process.pid}-${Date.now()}-${topics++}`;
  return {
    settings: {
      service_url: broker.serviceUrl,
      admin_url: broker.httpUrl,
      topic,
      create_topic: 'if_missing',
      partitions: PARTITIONS,
      send_timeout_ms: 5_000,
      connect_timeout_ms: 2_000,
    },
    action: { key: '${dev}', properties: { seq: '${seq}' } },
    stored: (expected) => readSeqs(broker.httpUrl, topic, expected),
  };
}

export const pulsarAdapter: SinkAdapter = {
  target: async () => target(await sharedPulsar()),
  async ownService() {
    // A broker of its own: stopping the shared one would break every other test of the run.
    const broker = await startPulsar();
    return { service: broker, target: target(broker) };
  },
  // Over the broker's 5 MiB maxMessageSize: refused before it is sent.
  rejectable: (seq) => ({ ...goodRecord(seq), pad: 'x'.repeat(6 * 1024 * 1024) }),
  rejection: /exceeds the broker's limit/,
};
