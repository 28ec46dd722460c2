// Which partition a record goes to. `murmur2` is the Java client's keyed choice
// (org.apache.kafka.common.utils.Utils.murmur2, then toPositive(h) % partitions), so weir, Java,
// librdkafka's murmur2_random and kafkajs' DefaultPartitioner agree on where a key lives;
// `round_robin` rotates over the available partitions, ignoring the key.
//
// Why not kafkajs's own DefaultPartitioner, which makes the same choice: it computes murmur2 with
// its 64-bit Long class (an object per arithmetic step) and filters the partition list for every
// record. `npm run bench -- partitioner`: 1,503 ns per record for kafkajs's, 32 ns for this one,
// same partitions for 1,000 keys over 12 partitions (docs/benchmarks.md); weir's goal for a whole
// Kafka row is 12 µs of CPU. Math.imul gives the 32-bit multiply murmur2 needs directly.
import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';

const M = 0x5bd1e995;
const SEED = 0x9747b28c;

/** Kafka's murmur2 of `data` as a signed 32-bit integer, like the Java client's Utils.murmur2. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = (data[i]! & 0xff) | ((data[i + 1]! & 0xff) << 8) | ((data[i + 2]! & 0xff) << 16) | ((data[i + 3]! & 0xff) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  // The 1–3 trailing bytes (Java: a switch on length % 4 falling through).
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= (data[whole + 2]! & 0xff) << 16;
    if (rest >= 2) h ^= (data[whole + 1]! & 0xff) << 8;
    h ^= data[whole]! & 0xff;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The Java client's Utils.toPositive: clears the sign bit (not Math.abs). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition the Java client picks for a serialized key (BuiltInPartitioner.partitionForKey). */
export function partitionForKey(key: Uint8Array, partitions: number): number {
  return toPositive(murmur2(key)) % partitions;
}

/** Records produced with round_robin ignore their key when a partition is chosen. */
const roundRobin = new WeakSet<object>();

/** Marks a kafkajs message so the weir partitioner rotates it instead of hashing its key. */
export function markRoundRobin(message: object): void {
  roundRobin.add(message);
}

/** A kafkajs partitioner factory implementing both modes; one instance per producer. */
export const WeirPartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }: PartitionerArgs): number => {
    if (message.partition !== undefined && message.partition !== null) return message.partition;
    const key = message.key;
    if (key !== undefined && key !== null && !roundRobin.has(message)) {
      const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
      return partitionForKey(bytes, partitionMetadata.length);
    }
    const n = (counters.get(topic) ?? -1) + 1;
    counters.set(topic, n & 0x7fffffff);
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    if (available.length > 0) return available[n % available.length]!.partitionId;
    return n % partitionMetadata.length;
  };
};
