// The admin REST calls the sink makes: read or create a partitioned topic, and per-partition
// stats for reconciliation. `persistent://t/ns/x` maps to `/admin/v2/persistent/t/ns/x`.
import { PulsarError } from './errors.js';

export function topicPath(topic: string): string {
  const m = /^(persistent|non-persistent):\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(topic);
  if (!m) throw new PulsarError('sink.pulsar.bad_topic', `topic must look like persistent://tenant/namespace/topic, not '${topic}'`);
  return [m[1], m[2], m[3], m[4]].map((p) => encodeURIComponent(p!)).join('/');
}

export interface AdminOptions {
  readonly adminUrl: string;
  readonly authToken?: string | undefined;
  readonly timeoutMs: number;
}

async function call(opts: AdminOptions, method: string, path: string, body?: string, signal?: AbortSignal): Promise<{ status: number; text: string }> {
  const res = await request(opts, method, path, body, signal);
  return { status: res.status, text: await res.text() };
}

async function request(opts: AdminOptions, method: string, path: string, body?: string, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (opts.authToken) headers.authorization = `Bearer ${opts.authToken}`;
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const url = `${opts.adminUrl.replace(/\/+$/, '')}/admin/v2/${path}`;
  try {
    return await fetch(url, { method, headers, body, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    throw new PulsarError('sink.pulsar.admin_unreachable', `Pulsar admin API ${opts.adminUrl} unreachable: ${(err as Error).message}`, { cause: err });
  }
}

function failed(what: string, r: { status: number; text: string }): PulsarError {
  const body = r.text
    .replace(/<title>.*?<\/title>/is, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  // 5xx and 429 pass by themselves; anything else (401, 403, 404, 409…) needs an operator.
  const busy = r.status >= 500 || r.status === 429;
  return new PulsarError(busy ? 'sink.pulsar.admin_unavailable' : 'sink.pulsar.admin_failed', `${what}: HTTP ${r.status} ${body}`);
}

/** Partitions of a topic: 0 for a non-partitioned (or missing) topic. */
export async function readPartitions(opts: AdminOptions, topic: string, signal?: AbortSignal): Promise<number> {
  const r = await call(opts, 'GET', `${topicPath(topic)}/partitions`, undefined, signal);
  if (r.status === 404) return 0;
  if (r.status !== 200) throw failed(`partitions of ${topic}`, r);
  return (JSON.parse(r.text) as { partitions?: number }).partitions ?? 0;
}

/** Creates a partitioned topic when it has no partitions yet; returns the count in force. */
export async function ensurePartitionedTopic(opts: AdminOptions, topic: string, partitions: number, signal?: AbortSignal): Promise<number> {
  const existing = await readPartitions(opts, topic, signal);
  if (existing > 0) return existing;
  const r = await call(opts, 'PUT', `${topicPath(topic)}/partitions`, String(partitions), signal);
  if (r.status === 204 || r.status === 200) return partitions;
  if (r.status === 409) return readPartitions(opts, topic, signal);
  throw failed(`create ${topic} with ${partitions} partitions`, r);
}

export interface PartitionCount {
  readonly topic: string;
  readonly msgInCounter: number;
  readonly bytesInCounter: number;
}

/** partitioned-stats with perPartition=true: the broker's message counters per partition. */
export async function partitionedStats(
  opts: AdminOptions,
  topic: string,
  signal?: AbortSignal,
): Promise<{ total: PartitionCount; partitions: PartitionCount[]; storageSize: number }> {
  const r = await call(opts, 'GET', `${topicPath(topic)}/partitioned-stats?perPartition=true`, undefined, signal);
  if (r.status !== 200) throw failed(`partitioned-stats of ${topic}`, r);
  const s = JSON.parse(r.text) as {
    msgInCounter?: number;
    bytesInCounter?: number;
    storageSize?: number;
    partitions?: Record<string, { msgInCounter?: number; bytesInCounter?: number }>;
  };
  const partitions = Object.entries(s.partitions ?? {})
    .map(([t, p]) => ({ topic: t, msgInCounter: p.msgInCounter ?? 0, bytesInCounter: p.bytesInCounter ?? 0 }))
    .sort((a, b) => partitionIndex(a.topic) - partitionIndex(b.topic));
  return { total: { topic, msgInCounter: s.msgInCounter ?? 0, bytesInCounter: s.bytesInCounter ?? 0 }, partitions, storageSize: s.storageSize ?? 0 };
}

function partitionIndex(t: string): number {
  const m = /-partition-(\d+)$/.exec(t);
  return m ? Number(m[1]) : -1;
}

/** A durable subscription from the earliest message, if the topic has none of that name (creates the topic when the broker auto-creates). */
export async function ensureSubscription(opts: AdminOptions, topic: string, subscription: string, signal?: AbortSignal): Promise<void> {
  const earliest = JSON.stringify({ ledgerId: -1, entryId: -1, partitionIndex: -1 });
  const r = await call(opts, 'PUT', `${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}`, earliest, signal);
  if (r.status === 204 || r.status === 200 || r.status === 409) return;
  throw failed(`create subscription ${subscription} on ${topic}`, r);
}

/** Messages (entries) a subscription has not acknowledged. */
export async function subscriptionBacklog(opts: AdminOptions, topic: string, subscription: string, signal?: AbortSignal): Promise<number> {
  const r = await call(opts, 'GET', `${topicPath(topic)}/stats`, undefined, signal);
  if (r.status === 404) return 0;
  if (r.status !== 200) throw failed(`stats of ${topic}`, r);
  const s = JSON.parse(r.text) as { subscriptions?: Record<string, { msgBacklog?: number }> };
  return s.subscriptions?.[subscription]?.msgBacklog ?? 0;
}

/** The entry at 1-based `position` of a subscription's backlog, raw (peek); undefined past its end. */
export async function peekEntry(
  opts: AdminOptions,
  topic: string,
  subscription: string,
  position: number,
  signal?: AbortSignal,
): Promise<{ headers: Headers; body: Buffer } | undefined> {
  const res = await request(opts, 'GET', `${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}/position/${position}`, undefined, signal);
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw failed(`peek ${topic} ${subscription} at ${position}`, { status: res.status, text: body.toString('utf8') });
  return { headers: res.headers, body };
}
