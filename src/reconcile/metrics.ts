// Counters of one or more running weir instances (replicas in one share group), read from their
// /metrics and summed.

export interface InstanceMetrics {
  readonly received: number;
  readonly acked: number;
  rule(id: string): { matched: number; passed: number; failed: number };
  action(sink: string, rule: string): { success: number; deadLettered: number };
}

type Sample = { name: string; labels: Record<string, string>; value: number };

export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function fetchMetrics(urls: string[], signal?: AbortSignal): Promise<InstanceMetrics> {
  const samples: Sample[] = [];
  for (const url of urls) {
    // http://user:password@host/metrics for a weir with http.basic_auth: fetch() refuses
    // credentials in a URL, so they travel as the Authorization header.
    const u = new URL(url);
    const headers: Record<string, string> = {};
    if (u.username || u.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
      u.username = '';
      u.password = '';
    }
    let res: Response;
    try {
      res = await fetch(u, { signal, headers });
    } catch (err) {
      // fetch's own message is a bare "fetch failed": name the URL and the reason beneath it.
      const cause = (err as Error).cause;
      throw new Error(`${u.href}: ${cause instanceof Error ? cause.message : (err as Error).message}`, { cause: err });
    }
    if (!res.ok) throw new Error(`${u.href}: HTTP ${res.status}`);
    samples.push(...parsePrometheus(await res.text()));
  }
  return sumMetrics(samples);
}

export function sumMetrics(samples: Sample[]): InstanceMetrics {
  const sum = (name: string, match: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
  return {
    received: sum('weir_ingest_received_total'),
    acked: sum('weir_ingest_acked_total'),
    rule: (rule) => ({
      matched: sum('weir_rule_matched_total', { rule }),
      passed: sum('weir_rule_passed_total', { rule }),
      failed: sum('weir_rule_failed_total', { rule }),
    }),
    action: (sink, rule) => ({ success: sum('weir_sink_success_total', { sink, rule }), deadLettered: sum('weir_sink_dead_lettered_total', { sink, rule }) }),
  };
}
