// The identities weir's counters keep at every scrape (docs/metrics.md), checked on one parsed
// /metrics text. Returns one line per violation; empty means all hold.

type Series = Map<string, number>;

function byLabels(metrics: Series, name: string, keyLabels: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of metrics) {
    const brace = k.indexOf('{');
    if ((brace < 0 ? k : k.slice(0, brace)) !== name) continue;
    const labels = Object.fromEntries([...k.slice(brace + 1, -1).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = keyLabels.map((l) => labels[l] ?? '').join('|');
    out.set(key, (out.get(key) ?? 0) + v);
  }
  return out;
}

function check(metrics: Series, keyLabels: string[], left: string, right: string[], violations: string[]): void {
  const l = byLabels(metrics, left, keyLabels);
  const rs = right.map((r) => byLabels(metrics, r, keyLabels));
  for (const [key, value] of l) {
    const sum = rs.reduce((a, r) => a + (r.get(key) ?? 0), 0);
    if (sum !== value) violations.push(`${left}{${key}} = ${value} but ${right.join(' + ')} = ${sum}`);
  }
}

export function identityViolations(metrics: Series): string[] {
  const v: string[] = [];
  check(metrics, ['rule'], 'weir_rule_matched_total', ['weir_rule_passed_total', 'weir_rule_failed_total'], v);
  check(metrics, ['rule'], 'weir_rule_failed_total', ['weir_rule_failed_exception_total', 'weir_rule_failed_no_result_total'], v);
  check(
    metrics,
    ['sink', 'rule'],
    'weir_sink_matched_total',
    ['weir_sink_success_total', 'weir_sink_failed_total', 'weir_sink_dead_lettered_total', 'weir_sink_queuing', 'weir_sink_inflight'],
    v,
  );
  check(metrics, ['connection'], 'weir_ingest_received_total', ['weir_ingest_acked_total', 'weir_ingest_unacked', 'weir_ingest_abandoned_total'], v);
  return v;
}
