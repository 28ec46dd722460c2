// docs/metrics.md and the metrics weir registers (src/metrics/names.ts) stay in step: every metric a
// running weir exports is documented with its labels, and every documented metric exists.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createMetrics, DEAD_LETTER_REASONS, registerProcessMetrics } from '../src/metrics/names.js';
import { ROOT } from './harness/weir.js';

/** The first two columns of each row of docs/metrics.md's tables: metric name(s) → labels. */
function documented(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const doc = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');
  for (const [, names, labels] of doc.matchAll(/^\| (`weir_[^|]+)\|([^|]*)\|/gm)) {
    const ls =
      labels!.trim() === '—' || labels!.includes("prom-client's")
        ? []
        : labels!
            .split(',')
            .map((l) => l.trim())
            .filter(Boolean);
    for (const [, n] of names!.matchAll(/`(weir_[a-z_*]+)`/g)) out.set(n!, ls);
  }
  return out;
}

test('every metric a running weir registers is in docs/metrics.md with its labels, and every documented one exists', async () => {
  const registry = new Registry();
  createMetrics(registry);
  registerProcessMetrics(registry, '0.0.0-test');
  const doc = documented();
  const wildcards = [...doc.keys()].filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1));
  const registered = (await registry.getMetricsAsJSON()).map((m) => ({ name: m.name, labels: (m as unknown as { labelNames?: string[] }).labelNames }));
  const own = registered.filter((m) => !wildcards.some((w) => m.name.startsWith(w)));
  assert.deepEqual(
    own
      .map((m) => m.name)
      .filter((n) => !doc.has(n))
      .sort(),
    [],
    'metrics missing from docs/metrics.md',
  );
  const names = new Set(registered.map((m) => m.name));
  const gone = [...doc.keys()].filter((n) => (n.endsWith('*') ? !registered.some((m) => m.name.startsWith(n.slice(0, -1))) : !names.has(n)));
  assert.deepEqual(gone.sort(), [], 'documented metrics weir no longer registers');
  for (const m of own) {
    const metric = registry.getSingleMetric(m.name) as unknown as { labelNames: string[] };
    assert.deepEqual([...metric.labelNames].sort(), [...doc.get(m.name)!].sort(), `labels of ${m.name}`);
  }
});

test('weir_dead_letter_total is exported at 0 for each reason from the start, and docs/metrics.md names the same reasons', async () => {
  const registry = new Registry();
  createMetrics(registry);
  const text = await registry.metrics();
  for (const reason of DEAD_LETTER_REASONS) assert.match(text, new RegExp(`^weir_dead_letter_total\\{reason="${reason}"\\} 0$`, 'm'), reason);
  const row = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('| `weir_dead_letter_total`'))!;
  const documentedReasons = [...row.split('|')[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
  assert.deepEqual(documentedReasons, [...DEAD_LETTER_REASONS]);
});
