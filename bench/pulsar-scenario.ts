// The seeds' 003 scenario as the Pulsar benchmarks (bench/pulsar.ts end to end,
// bench/standalone-pulsar.ts weir alone) set it up: 1 KB payloads into a 10-partition topic with
// zlib through weir's protocol transport, and every message read back afterwards through the
// broker's WebSocket reader API (test/harness/pulsar-reader.ts; the Java client inside the broker
// decompresses the batches).
import type { PulsarEndpoints } from '../test/harness/pulsar.js';
import { readPartitions } from '../test/harness/pulsar-reader.js';

export const SIZE = 1024;
export const PARTITIONS = 10;

/** The sink's weir.yaml keys, one per line: the topic created with PARTITIONS partitions, zlib. */
export function pulsarSinkLines(pulsar: PulsarEndpoints, topic: string): string[] {
  return [
    'type: pulsar',
    `service_url: ${pulsar.serviceUrl}`,
    `admin_url: ${pulsar.httpUrl}`,
    `topic: ${topic}`,
    'create_topic: if_missing',
    `partitions: ${PARTITIONS}`,
    'compression: zlib',
  ];
}

/** One message read: its payload bytes and the broker's publish time (epoch ms). */
export type OnRead = (payload: Buffer, publishTime: number) => void;

/** Reads every partition of `topic` until `total` messages arrived (then 1 s more, for duplicates); resolves with the number read. */
export async function readTopic(httpUrl: string, topic: string, total: number, onRead: OnRead): Promise<number> {
  let read = 0;
  await readPartitions(httpUrl, topic, PARTITIONS, (_partition, m) => {
    onRead(m.payload, Date.parse(m.publishTime));
    return ++read >= total;
  });
  return read;
}
