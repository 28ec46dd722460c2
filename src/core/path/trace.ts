// Trace: the next N messages of one rule followed through their steps (received → rule output →
// rendered item per action → stored or dead-lettered), for the console. While no one traces,
// `Tracer.active` is undefined and the pipeline and sink runners test only that; a trace is taken
// from at most MAX_MESSAGES messages, keeps at most MAX_STEPS steps and PAYLOAD_BYTES of payload
// of each (≤ 100 × (16 KB + 64 small steps): about 2 MB at worst), and ends by itself once its
// messages have all ended, or after MAX_MS, whichever comes first.
import type { EvalResult, RuleEvent } from '../../rules/types.js';

export const MAX_MESSAGES = 100;
export const MAX_MS = 5 * 60_000;
const MAX_STEPS = 64;
const PAYLOAD_BYTES = 16 * 1024;

export type TraceStepName = 'received' | 'output' | 'rendered' | 'stored' | 'dead_lettered' | 'failed';

export interface TraceStepRecord {
  readonly step: TraceStepName;
  readonly at: number;
  readonly sink?: string;
  readonly detail?: unknown;
}

export interface TracedMessageRecord {
  readonly topic: string;
  readonly payload: Buffer;
  readonly steps: TraceStepRecord[];
  /** Items still to end (stored, dead-lettered or failed); the message ends at 0 after its output. */
  open: number;
  ended: boolean;
}

/** One trace: a rule, how many messages, until when. */
export class TraceSession {
  readonly messages: TracedMessageRecord[] = [];
  private readonly byEvent = new Map<RuleEvent, TracedMessageRecord>();
  private timer: NodeJS.Timeout | undefined;
  ended = false;

  constructor(
    readonly rule: string,
    readonly wanted: number,
    private readonly onEnd: (s: TraceSession) => void,
  ) {
    this.timer = setTimeout(() => this.end(), MAX_MS);
    this.timer.unref();
  }

  /** The rule matched a message: taken while the trace wants more. */
  received(rule: string, event: RuleEvent): void {
    if (rule !== this.rule || this.messages.length >= this.wanted || this.byEvent.has(event)) return;
    const raw = typeof event.payload === 'string' ? Buffer.from(event.payload) : event.payload;
    const m: TracedMessageRecord = {
      topic: event.topic,
      payload: Buffer.from(raw.subarray(0, PAYLOAD_BYTES)),
      steps: [{ step: 'received', at: Date.now(), detail: raw.length > PAYLOAD_BYTES ? { payload_bytes: raw.length, kept: PAYLOAD_BYTES } : undefined }],
      open: 0,
      ended: false,
    };
    this.messages.push(m);
    this.byEvent.set(event, m);
  }

  /** The rule's result for a traced message: its outputs, each going to `actions` actions. */
  output(rule: string, event: RuleEvent, result: EvalResult, actions: number): void {
    const m = this.traced(rule, event);
    if (!m) return;
    const outputs = result.matched ? result.outputs : [];
    this.step(m, { step: 'output', at: Date.now(), detail: { matched: result.matched, outputs } });
    m.open += outputs.length * actions;
    this.settleIfDone(m);
  }

  /** What one action made of an output: the row or message its sink would write. */
  rendered(rule: string, event: RuleEvent, sink: string, item: () => unknown): void {
    const m = this.traced(rule, event);
    if (m) this.step(m, { step: 'rendered', at: Date.now(), sink, detail: item() });
  }

  /** An item's end: stored, dead-lettered (with why) or failed; `sink` undefined when the rule itself failed. */
  finished(rule: string, event: RuleEvent, step: 'stored' | 'dead_lettered' | 'failed', sink: string | undefined, detail?: unknown): void {
    const m = this.traced(rule, event);
    if (!m) return;
    this.step(m, { step, at: Date.now(), sink, detail });
    if (sink === undefined) m.open = 0;
    else m.open--;
    this.settleIfDone(m);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.byEvent.clear();
    this.onEnd(this);
  }

  private traced(rule: string, event: RuleEvent): TracedMessageRecord | undefined {
    return rule === this.rule ? this.byEvent.get(event) : undefined;
  }

  private step(m: TracedMessageRecord, s: TraceStepRecord): void {
    if (m.steps.length < MAX_STEPS) m.steps.push(s);
  }

  private settleIfDone(m: TracedMessageRecord): void {
    if (m.open > 0 || !m.steps.some((s) => s.step === 'output' || s.step === 'dead_lettered')) return;
    m.ended = true;
    for (const [e, x] of this.byEvent) if (x === m) this.byEvent.delete(e);
    if (this.messages.length >= this.wanted && this.messages.every((x) => x.ended)) this.end();
  }
}

/** The one tracer of a runtime: `active` is what the message path tests. */
export class Tracer {
  /** The trace in progress; undefined when no one traces. */
  active: TraceSession | undefined;
  /** The last trace, kept to be read after it ended. */
  last: TraceSession | undefined;

  start(rule: string, count: number): TraceSession {
    this.active?.end();
    const s = new TraceSession(rule, Math.max(1, Math.min(MAX_MESSAGES, count)), (ended) => {
      if (this.active === ended) this.active = undefined;
    });
    this.active = s;
    this.last = s;
    return s;
  }
}
