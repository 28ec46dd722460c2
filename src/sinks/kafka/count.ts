// Kafka's side of `weir reconcile`: how many records a topic holds, from its offsets alone (no
// consuming). Per partition that is end offset − start offset (log end offset and log start
// offset, ListOffsets LATEST/EARLIEST), which equals the records written as long as
//   - nothing was deleted yet by retention or DeleteRecords (the start offset moves on), and
//   - the topic is not compacted, and no transactional producer wrote to it (commit markers take
//     an offset each; weir's idempotent producer is not transactional and writes none).
// For a topic that lives longer than a reconcile window, snapshot the end offsets first and
// count the records written since (countSince): that is immune to retention at the start.
import kafkajs, { type Admin } from 'kafkajs';
import type { Logger } from '../../log.js';
import { kafkaClientOptions } from './client.js';
import type { ActionOf, TargetCount } from '../types.js';
import type { KafkaAction, KafkaConfig } from './spec.js';

const { Kafka } = kafkajs;

export interface PartitionCount {
  readonly partition: number;
  /** Log start offset (earliest). */
  readonly start: number;
  /** Log end offset (the offset the next record will get). */
  readonly end: number;
}

export interface TopicCount {
  readonly topic: string;
  /** Σ over partitions of (end − start). */
  readonly records: number;
  readonly partitions: readonly PartitionCount[];
}

/** End offsets of a topic's partitions at one moment, to count what is written after it. */
export interface OffsetSnapshot {
  readonly topic: string;
  readonly at: number;
  /** partition → end offset. */
  readonly ends: Readonly<Record<number, number>>;
}

function toNumber(s: string): number {
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new RangeError(`offset ${s} is not a safe integer`);
  return n;
}

/** Records in `topic`: Σ over partitions of (end offset − start offset). */
export async function countTopic(admin: Admin, topic: string): Promise<TopicCount> {
  const offsets = await admin.fetchTopicOffsets(topic);
  const partitions = offsets.map((o) => ({ partition: o.partition, start: toNumber(o.low), end: toNumber(o.high) })).sort((a, b) => a.partition - b.partition);
  return { topic, records: partitions.reduce((sum, p) => sum + (p.end - p.start), 0), partitions };
}

/** The end offset of every partition of `topic`, now. */
export async function snapshotOffsets(admin: Admin, topic: string): Promise<OffsetSnapshot> {
  const c = await countTopic(admin, topic);
  const ends: Record<number, number> = {};
  for (const p of c.partitions) ends[p.partition] = p.end;
  return { topic, at: Date.now(), ends };
}

/**
 * Records written to the snapshot's topic since it was taken: Σ (end now − end then). A partition
 * added since counts from its start offset.
 */
export async function countSince(admin: Admin, snapshot: OffsetSnapshot): Promise<number> {
  const now = await countTopic(admin, snapshot.topic);
  let total = 0;
  for (const p of now.partitions) {
    const then = snapshot.ends[p.partition];
    total += then === undefined ? p.end - p.start : p.end - then;
  }
  return total;
}

/** Runs `fn` with an admin client of the sink's cluster, and disconnects it afterwards. */
export async function withKafkaAdmin<T>(cfg: KafkaConfig, log: Logger, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka(kafkaClientOptions(cfg, log)).admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

/**
 * `weir reconcile`'s count: the records of each topic the actions write (a topic given as a
 * template is not counted: its topics are not known here). Compared with weir's success counters.
 */
export async function countForReconcile(cfg: KafkaConfig, actions: ReadonlyArray<ActionOf<KafkaAction>>, log: Logger): Promise<TargetCount[]> {
  const out: TargetCount[] = [];
  const topics = new Map<string, string[]>();
  for (const a of actions) {
    if (a.settings.topic.includes('${')) out.push({ target: a.settings.topic, rules: [a.rule], note: 'topic is a template: not counted' });
    else topics.set(a.settings.topic, [...(topics.get(a.settings.topic) ?? []), a.rule]);
  }
  await withKafkaAdmin(cfg, log, async (admin) => {
    for (const [topic, rules] of topics) out.push({ target: topic, rules, held: (await countTopic(admin, topic)).records });
  });
  return out;
}
