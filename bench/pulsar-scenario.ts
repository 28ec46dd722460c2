// The seeds' 003 scenario as the Pulsar benchmarks (bench/pulsar.ts end to end,
// bench/standalone-pulsar.ts weir alone) set it up: 1 KB payloads into a 10-partition topic with
// zlib through weir's protocol transport, and every message read back afterwards through the
// broker's WebSocket reader API (the Java client inside the broker decompresses the batches).
import WebSocket from 'ws';
import type { PulsarEndpoints } from '../test/harness/pulsar.js';

export const SIZE = 1024;
export const PARTITIONS = 10;

/** The sink's weir.yaml lines (indented under `sinks.<name>`): the topic created with PARTITIONS partitions, zlib. */
export function pulsarSinkYaml(pulsar: PulsarEndpoints, topic: string): string {
  return [
    'type: pulsar',
    `service_url: ${pulsar.serviceUrl}`,
    `admin_url: ${pulsar.httpUrl}`,
    `topic: ${topic}`,
    'create_topic: if_missing',
    `partitions: ${PARTITIONS}`,
    'compression: zlib',
  ]
    .map((l) => `    ${l}`)
    .join('\n');
}

/** One message read: its payload bytes and the producer's publish time (epoch ms). */
export type OnRead = (payload: Buffer, publishTime: number) => void;

/**
 * Reads each of `partitions` partitions of `topic` from the earliest message until `total` arrived,
 * then 1 s more (duplicates), calling `onRead` for each; resolves with the number read. Fails when
 * nothing arrives for `stallMs`: the reader API delivers about 8,000 msg/s here, so a fixed
 * deadline would fail long runs (5,050,000 messages) that are still reading.
 */
export async function readTopic(httpUrl: string, topic: string, partitions: number, total: number, onRead: OnRead, stallMs = 60_000): Promise<number> {
  let read = 0;
  const sockets: WebSocket[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let lastRead = -1;
      timer = setInterval(() => {
        if (read === lastRead) reject(new Error(`read ${read} of ${total} messages, then nothing for ${stallMs} ms`));
        lastRead = read;
      }, stallMs);
      let done = false;
      for (let p = 0; p < partitions; p++) {
        const ws = new WebSocket(
          `${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${topic.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=5000`,
        );
        sockets.push(ws);
        ws.on('error', reject);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; payload: string; publishTime: string };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          read++;
          onRead(Buffer.from(m.payload, 'base64'), Date.parse(m.publishTime));
          if (!done && read >= total) {
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
  return read;
}
