// Reading a partitioned Pulsar topic back from its earliest message through the broker's
// WebSocket reader API (the Java client inside the broker splits and decompresses the batches),
// as the end-to-end tests and the Pulsar benchmark check what weir wrote; and what it stores.
import WebSocket from 'ws';
import { readUntil } from './read-until.js';

/** One message as the reader API delivers it. */
export interface ReadMessage {
  payload: Buffer;
  key?: string;
  /** The broker's publish time (ISO text). */
  publishTime: string;
}

/**
 * Hands every message of each of `partitions` partitions of `topic` to `onMessage` until it
 * answers true (enough), as readUntil ends a read (the reader API delivers about 8,000 msg/s
 * here: 5,050,000 messages take over ten minutes). A partition's messages come in log order.
 */
export async function readPartitions(
  httpUrl: string,
  topic: string,
  partitions: number,
  onMessage: (partition: number, m: ReadMessage) => boolean,
  stallMs = 60_000,
): Promise<void> {
  const sockets: WebSocket[] = [];
  try {
    await readUntil(`the messages of ${topic}`, stallMs, (feed) => {
      for (let p = 0; p < partitions; p++) {
        const ws = new WebSocket(
          `${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${topic.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=5000`,
        );
        sockets.push(ws);
        ws.on('error', feed.fail);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; payload: string; key?: string; publishTime: string };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          feed.item(onMessage(p, { payload: Buffer.from(m.payload, 'base64'), key: m.key, publishTime: m.publishTime }));
        });
      }
    });
  } finally {
    for (const ws of sockets) ws.terminate();
  }
}

/** The bytes the broker stores for a partitioned topic (its partitioned-stats' storageSize). */
export async function storedBytes(httpUrl: string, topic: string): Promise<number> {
  const res = await fetch(`${httpUrl}/admin/v2/persistent/${topic.slice('persistent://'.length)}/partitioned-stats`);
  return ((await res.json()) as { storageSize: number }).storageSize;
}
