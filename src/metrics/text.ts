// Prometheus text format (what /metrics serves) read back into samples: for `weir reconcile`
// (every instance's counters), the demo's status line and the tests, one parser for all three.

/** One sample: its metric name, its labels (values as written, escapes kept) and its value. */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Every sample of a Prometheus text exposition; comments, blank and unreadable lines are skipped. */
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

/** The sum of every sample of one metric, skipping values that are not finite. */
export function sumOf(samples: readonly Sample[], name: string): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Number.isFinite(s.value)) sum += s.value;
  return sum;
}
