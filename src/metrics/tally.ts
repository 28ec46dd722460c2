// Counters and gauges whose hot-path update is a plain `+=`. prom-client hashes the label values
// on every inc(), which cost several µs per message across the six counters a message touches;
// a Tally is resolved once per label set and synced into prom-client when Prometheus scrapes.
// All tallies are synced in the same synchronous pass of one scrape, so a scrape sees one
// consistent snapshot (the identities in docs/metrics.md hold at every scrape).
import { Counter, Gauge, type Registry } from 'prom-client';

export class Tally {
  value = 0;
  synced = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(n = 1): void {
    this.value += n;
  }
  dec(n = 1): void {
    this.value -= n;
  }
  set(v: number): void {
    this.value = v;
  }
}

export interface TallyFamily {
  /** The tally for these label values (in labelNames order), created on first use. */
  labels(...values: string[]): Tally;
  /** Shorthand for a family without labels. */
  inc(n?: number): void;
  /** The sum over every label set: what a PromQL sum() of the family gives at this moment. */
  total(): number;
}

/** `created` is told of each tally when it is first made (a gauge samples it from then on). */
function family(labelNames: string[], tallies: Map<string, Tally>, created?: (values: string[], t: Tally) => void): TallyFamily {
  const labels = (...values: string[]): Tally => {
    const key = values.join('\u0000');
    let t = tallies.get(key);
    if (!t) {
      t = new Tally(Object.fromEntries(labelNames.map((n, i) => [n, values[i] ?? ''])));
      tallies.set(key, t);
      created?.(values, t);
    }
    return t;
  };
  const total = () => {
    let sum = 0;
    for (const t of tallies.values()) sum += t.value;
    return sum;
  };
  return { labels, inc: (n = 1) => labels().inc(n), total };
}

export function tallyCounter(registry: Registry, name: string, help: string, labelNames: string[]): TallyFamily {
  const tallies = new Map<string, Tally>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const t of tallies.values()) {
        const delta = t.value - t.synced;
        if (delta > 0 || t.synced === 0) this.inc(t.labels, delta);
        t.synced = t.value;
      }
    },
  });
  return family(labelNames, tallies);
}

/** A gauge kept as tallies: each one is sampled at the scrape (sampledGauge). */
export function tallyGauge(registry: Registry, name: string, help: string, labelNames: string[]): TallyFamily {
  const gauge = sampledGauge(registry, name, help, labelNames);
  return family(labelNames, new Map(), (values, t) => gauge.sample(values, () => t.value));
}

/** A gauge read from its source when Prometheus scrapes (a size or an age the code already knows). */
export interface SampledGaugeFamily {
  /** Reads `read()` for these label values (in labelNames order) at every scrape, from now on. */
  sample(values: string[], read: () => number): void;
}

/**
 * A gauge with nothing to update on the hot path: each label set's value is read from its source
 * in the scrape's synchronous pass, like the tallies, so it belongs to the same snapshot.
 */
export function sampledGauge(registry: Registry, name: string, help: string, labelNames: string[]): SampledGaugeFamily {
  const sources = new Map<string, { labels: Record<string, string>; read: () => number }>();
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const s of sources.values()) this.set(s.labels, s.read());
    },
  });
  return {
    sample(values, read) {
      sources.set(values.join('\u0000'), { labels: Object.fromEntries(labelNames.map((n, i) => [n, values[i] ?? ''])), read });
    },
  };
}
