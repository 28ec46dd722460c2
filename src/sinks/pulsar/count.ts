// Reconcile support: how many messages the broker received on the sink's topic, per partition,
// from the partitioned-stats admin endpoint (msgInCounter counts messages, not batches). The
// counters live in broker memory since the topic was loaded: they reset when the broker restarts
// or unloads the topic, so compare them with weir's counters over the same broker lifetime.
import { PulsarError } from './errors.js';
import { partitionedStats, type PartitionCount } from './admin.js';
import type { ActionOf, TargetCount } from '../types.js';
import type { PulsarAction, PulsarConfig } from './spec.js';

export interface PulsarCount {
  readonly topic: string;
  readonly total: number;
  readonly partitions: ReadonlyArray<{ partition: number; topic: string; count: number }>;
}

export async function countPulsarMessages(
  cfg: Pick<PulsarConfig, 'admin_url' | 'topic' | 'auth_token' | 'connect_timeout_ms'>,
  signal?: AbortSignal,
): Promise<PulsarCount> {
  if (!cfg.admin_url) throw new PulsarError('sink.pulsar.no_admin_url', `counting messages on ${cfg.topic} needs admin_url`);
  const s = await partitionedStats({ adminUrl: cfg.admin_url, authToken: cfg.auth_token, timeoutMs: cfg.connect_timeout_ms ?? 10_000 }, cfg.topic, signal);
  return {
    topic: cfg.topic,
    total: s.total.msgInCounter,
    partitions: s.partitions.map((p: PartitionCount, i) => ({
      partition: Number(/-partition-(\d+)$/.exec(p.topic)?.[1] ?? i),
      topic: p.topic,
      count: p.msgInCounter,
    })),
  };
}

/** `weir reconcile`'s count: the messages the broker received on the sink's topic (one per sink). */
export async function countForReconcile(cfg: PulsarConfig, actions: ReadonlyArray<ActionOf<PulsarAction>>): Promise<TargetCount[]> {
  return [{ target: cfg.topic, rules: actions.map((a) => a.rule), held: (await countPulsarMessages(cfg)).total }];
}
