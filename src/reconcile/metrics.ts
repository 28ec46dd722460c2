// Counters of one or more running weir instances (replicas in one share group), read from their
// /metrics and summed; and what each one holds, per connection, as it said it.
//
// Every URL is read at once, each within METRICS_TIMEOUT_MS: a weir that is stopped (SIGSTOP) or
// whose event loop is stuck (a rule caught in a catastrophic regex) accepts the connection in the
// kernel and never answers, and that is exactly the weir whose held messages matter. Each URL that
// does not answer is named, not just the first.
import { errorText } from '../errors.js';
import { redactUrl } from '../log.js';
import { parsePrometheus, type Sample } from '../metrics/text.js';

/** How long a /metrics answer may take: a loaded weir answers in milliseconds, a frozen one never. */
export const METRICS_TIMEOUT_MS = 10_000;

/** One connection of one instance: what it holds (received, not settled), as its gauges say. */
export interface ConnectionHeld {
  /** The --metrics URL it was read from (credentials redacted). */
  readonly instance: string;
  readonly connection: string;
  /** undefined: the weir is older than the gauge. */
  readonly connected?: boolean;
  readonly held?: number;
  readonly oldestUnackedS?: number;
}

export interface InstanceMetrics {
  readonly received: number;
  readonly acked: number;
  /** Per instance and connection, in the order the URLs were given. */
  readonly held: readonly ConnectionHeld[];
  rule(id: string): { matched: number; passed: number; failed: number };
  action(sink: string, rule: string): { success: number; deadLettered: number };
}

/** A --metrics URL that did not answer, or not with metrics: named (credentials redacted) with why. */
export interface UnreadMetrics {
  readonly url: string;
  readonly error: string;
}

export type MetricsReading = { ok: true; metrics: InstanceMetrics } | { ok: false; unread: UnreadMetrics[] };

export async function fetchMetrics(urls: string[], timeoutMs = METRICS_TIMEOUT_MS): Promise<MetricsReading> {
  const read = await Promise.allSettled(urls.map((url) => fetchOne(url, timeoutMs)));
  const unread = read.flatMap((r, i) => (r.status === 'rejected' ? [{ url: redactUrl(urls[i]!), error: errorText(r.reason) }] : []));
  if (unread.length) return { ok: false, unread };
  const perUrl = read.map((r) => (r as PromiseFulfilledResult<Sample[]>).value);
  return {
    ok: true,
    metrics: sumMetrics(
      perUrl.flat(),
      perUrl.flatMap((samples, i) => heldOf(redactUrl(urls[i]!), samples)),
    ),
  };
}

async function fetchOne(url: string, timeoutMs: number): Promise<Sample[]> {
  // http://user:password@host/metrics for a weir with http.basic_auth: fetch() refuses
  // credentials in a URL, so they travel as the Authorization header.
  const u = new URL(url);
  const headers: Record<string, string> = {};
  if (u.username || u.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(u, { signal, headers });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return parsePrometheus(await res.text());
  } catch (err) {
    // fetch's own message is a bare "fetch failed": the reason beneath it (the caller names the URL).
    const cause = (err as Error).cause;
    if (signal.aborted) throw new Error(`no answer within ${timeoutMs / 1000} s (a weir stopped or stuck answers nothing)`, { cause: err });
    throw new Error(cause instanceof Error ? cause.message : (err as Error).message, { cause: err });
  }
}

/** One instance's connections: those with any of the ingest gauges. */
function heldOf(instance: string, samples: Sample[]): ConnectionHeld[] {
  const of = (name: string) => new Map(samples.filter((s) => s.name === name).map((s) => [s.labels.connection ?? '', s.value]));
  const [connected, held, oldest] = [of('weir_ingest_connected'), of('weir_ingest_held'), of('weir_ingest_oldest_unacked_age_seconds')];
  const names = [...new Set([...connected.keys(), ...held.keys(), ...oldest.keys()])].sort();
  return names.map((connection) => ({
    instance,
    connection,
    ...(connected.has(connection) ? { connected: connected.get(connection) === 1 } : {}),
    ...(held.has(connection) ? { held: held.get(connection)! } : {}),
    ...(oldest.has(connection) ? { oldestUnackedS: oldest.get(connection)! } : {}),
  }));
}

export function sumMetrics(samples: Sample[], held: readonly ConnectionHeld[] = []): InstanceMetrics {
  const sum = (name: string, match: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
  return {
    received: sum('weir_ingest_received_total'),
    acked: sum('weir_ingest_acked_total'),
    held,
    rule: (rule) => ({
      matched: sum('weir_rule_matched_total', { rule }),
      passed: sum('weir_rule_passed_total', { rule }),
      failed: sum('weir_rule_failed_total', { rule }),
    }),
    action: (sink, rule) => ({ success: sum('weir_sink_success_total', { sink, rule }), deadLettered: sum('weir_sink_dead_lettered_total', { sink, rule }) }),
  };
}
