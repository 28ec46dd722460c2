// The console's memory of the last 15 minutes: every STEP_MS, one point of the runtime's totals
// (messages in, rows out, dead letters: differences of the counters /metrics exports, as rates)
// and of the process (RSS, CPU), and each live rule's matched rate, in fixed rings of POINTS.
// One timer for the whole runtime, started with it, whether the page is open or not (the chart
// has its past when someone opens it); a sample reads a few dozen numbers.
//
// Memory bound: 6 Float64Arrays of 180 for the totals (8.6 KB) and one of 180 per live rule
// (1.4 KB each: 100 rules, 144 KB); a removed rule's ring is dropped at the next sample.
import type { HistoryPoint } from './api.js';

export const STEP_MS = 5000;
export const POINTS = 180;
/** Steps in the 5-minute average. */
const STEPS_5M = (5 * 60_000) / STEP_MS;

/** The counters a sample reads: totals since the process started. */
export interface HistorySources {
  messagesIn(): number;
  rowsOut(): number;
  deadLetters(): number;
  /** Each live rule's matched total. */
  ruleMatched(): Iterable<readonly [string, number]>;
}

interface RuleSeries {
  readonly rates: Float64Array;
  last: number;
  max: number;
  /** The step this rule was first sampled at: its earlier points are 0. */
  readonly since: number;
}

export class History {
  private readonly t = new Float64Array(POINTS);
  private readonly messagesIn = new Float64Array(POINTS);
  private readonly rowsOut = new Float64Array(POINTS);
  private readonly deadLetters = new Float64Array(POINTS);
  private readonly rss = new Float64Array(POINTS);
  private readonly cpu = new Float64Array(POINTS);
  private readonly rules = new Map<string, RuleSeries>();
  /** Points written so far (the ring's next index is n % POINTS). */
  private n = 0;
  private prev: { at: number; messagesIn: number; rowsOut: number; deadLetters: number; cpu: NodeJS.CpuUsage } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly src: HistorySources) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), STEP_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Takes one point (the first call only sets the baseline). */
  sample(now = Date.now()): void {
    const cur = { at: now, messagesIn: this.src.messagesIn(), rowsOut: this.src.rowsOut(), deadLetters: this.src.deadLetters(), cpu: process.cpuUsage() };
    const prev = this.prev;
    this.prev = cur;
    const seen = new Set<string>();
    const seconds = prev ? Math.max(0.001, (now - prev.at) / 1000) : 1;
    const i = this.n % POINTS;
    for (const [id, matched] of this.src.ruleMatched()) {
      seen.add(id);
      let s = this.rules.get(id);
      if (!s) {
        s = { rates: new Float64Array(POINTS), last: matched, max: 0, since: this.n };
        this.rules.set(id, s);
        if (prev) s.rates[i] = 0;
        continue;
      }
      const rate = Math.max(0, matched - s.last) / seconds;
      s.last = matched;
      if (prev) {
        s.rates[i] = rate;
        if (rate > s.max) s.max = rate;
      }
    }
    for (const id of [...this.rules.keys()]) if (!seen.has(id)) this.rules.delete(id);
    if (!prev) return;
    this.t[i] = now;
    this.messagesIn[i] = (cur.messagesIn - prev.messagesIn) / seconds;
    this.rowsOut[i] = (cur.rowsOut - prev.rowsOut) / seconds;
    this.deadLetters[i] = (cur.deadLetters - prev.deadLetters) / seconds;
    this.rss[i] = process.memoryUsage.rss();
    this.cpu[i] = (cur.cpu.user - prev.cpu.user + cur.cpu.system - prev.cpu.system) / 1e6 / seconds;
    this.n++;
  }

  /** The points, oldest first. */
  points(): HistoryPoint[] {
    return this.indexes().map((i) => ({
      t: this.t[i]!,
      messages_in: this.messagesIn[i]!,
      rows_out: this.rowsOut[i]!,
      dead_letters: this.deadLetters[i]!,
      rss_bytes: this.rss[i]!,
      cpu: this.cpu[i]!,
    }));
  }

  /** The newest point, or undefined before the first step. */
  latest(): HistoryPoint | undefined {
    return this.points().at(-1);
  }

  /** A rule's matched per second: the last step, the mean of the last 5 minutes, the highest step. */
  ruleRate(id: string): { now: number; avg_5m: number; max: number } {
    const spark = this.ruleSpark(id);
    const recent = spark.slice(-STEPS_5M);
    const avg = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : 0;
    return { now: spark.at(-1) ?? 0, avg_5m: avg, max: this.rules.get(id)?.max ?? 0 };
  }

  /** A rule's matched per second, one point per step, oldest first (0 before the rule was live). */
  ruleSpark(id: string): number[] {
    const s = this.rules.get(id);
    return this.indexes().map((i, k, all) => (s && this.n - all.length + k >= s.since ? s.rates[i]! : 0));
  }

  private indexes(): number[] {
    const kept = Math.min(this.n, POINTS);
    return Array.from({ length: kept }, (_, k) => (this.n - kept + k) % POINTS);
  }
}
