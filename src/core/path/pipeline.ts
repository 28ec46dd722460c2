// One message's path, after its connection admitted it (mqtt-session.ts, ack-path.ts): its event
// (event.ts) → the rules whose FROM matches (router.ts) → each rule's compiled SQL → each output to
// each of the rule's actions (sink-runner.ts: batch, write, retry, dead-letter) → settled (ack-path.ts)
// once every output is stored or dead-lettered. A rule that fails on the message dead-letters it
// here. The counters follow EMQX: matched = passed + failed, failed = failed_exception + failed_no_result.
import type { BrokerConfig } from '../../config/schema.js';
import type { RuleConfig } from '../../config/types.js';
import { errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import { ruleCounters, type DeadLetterReason, type Metrics, type RuleCounters } from '../../metrics/names.js';
import { createMessageContext, rawPayloadOf, type MessageContext } from '../../rules/index.js';
import type { EvalResult, RuleEvent } from '../../rules/types.js';
import { letterFor, type DeadLetter } from '../../dead-letters/letter.js';
import type { DeadLetterQueue } from './dead-letter-queue.js';
import type { InboundMessage } from '../ingest/message.js';
import { TopicRouter } from './router.js';
import type { Settlement } from '../ingest/ack-path.js';
import { EventFactory } from '../ingest/event.js';
import type { ActionHandle, SinkRunner } from './sink-runner.js';
import { Tracer } from './trace.js';

export interface LiveRule {
  readonly cfg: RuleConfig;
  readonly actions: ReadonlyArray<{ runner: SinkRunner; handle: ActionHandle }>;
  readonly counters: RuleCounters;
  /** The last failure of the rule on a message (an exception, a payload it could not read), for the console. */
  lastError?: { readonly at: number; readonly message: string };
}

export class Pipeline {
  private router = new TopicRouter<LiveRule>();
  private rules: LiveRule[] = [];
  private readonly events: EventFactory;

  constructor(
    private readonly broker: BrokerConfig,
    node: string,
    private readonly runners: ReadonlyMap<string, SinkRunner>,
    private readonly dlq: DeadLetterQueue,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    /** Tested once per rule a message reaches: undefined `active` when no one traces (trace.ts). */
    private readonly tracer = new Tracer(),
  ) {
    this.events = new EventFactory(broker, node);
  }

  get liveRules(): readonly LiveRule[] {
    return this.rules;
  }

  /** The topic filters the enabled rules read, for the ingest's subscriptions. */
  filters(): string[] {
    return [...new Set(this.rules.flatMap((r) => r.cfg.compiled.filters))];
  }

  /**
   * Replaces the rule set. Rules whose file content is unchanged keep their bound actions (and so
   * their batches in progress); others are bound anew; removed rules' batches are flushed.
   */
  setRules(rules: readonly RuleConfig[]): void {
    const old = new Map(this.rules.map((r) => [r.cfg.id, r]));
    const next: LiveRule[] = [];
    for (const cfg of rules.filter((r) => r.enabled)) {
      const prev = old.get(cfg.id);
      if (prev && sameRule(prev.cfg, cfg)) {
        // Its actions (and batches in progress) stay; the new compilation is taken, since the
        // schemas it decodes with are loaded again with the rules.
        next.push({ ...prev, cfg });
        old.delete(cfg.id);
        continue;
      }
      const counters = ruleCounters(this.metrics, cfg.id);
      const actions = cfg.actions.map((a) => {
        const runner = this.runners.get(a.sink)!;
        const handle = runner.bind(cfg.id, a.settings, counters);
        return { runner, handle };
      });
      next.push({ cfg, actions, counters });
    }
    for (const gone of [...old.values()]) for (const a of gone.actions) a.runner.unbind(a.handle);
    const router = new TopicRouter<LiveRule>();
    for (const r of next) for (const f of r.cfg.compiled.filters) router.add(f, r);
    this.router = router;
    this.rules = next;
  }

  /**
   * Handles one message; `settlement` (made with one hold by whoever took the message in, see
   * ack-path.ts) settles once everything the message produced is durable. Releases that first hold.
   */
  handle(msg: InboundMessage, settlement: Settlement): void {
    const m = this.metrics;
    const rules = this.router.match(msg.topic);
    if (rules.length === 0) {
      m.ingestNoRule.inc();
      settlement.release();
      return;
    }
    const event = this.events.event(msg);
    if (msg.payload.length > this.broker.max_payload_bytes) {
      settlement.hold();
      const error = `payload of ${msg.payload.length} bytes exceeds broker.max_payload_bytes (${this.broker.max_payload_bytes})`;
      this.putLetter(letterFor(event, { ruleId: rules.map((r) => r.cfg.id).join(','), sink: '', reason: 'payload_too_large', error }), settlement);
      settlement.release();
      return;
    }
    const ctx = createMessageContext(event);
    for (const rule of rules) {
      const id = rule.cfg.id;
      rule.counters.matched.inc();
      if (this.tracer.active !== undefined) this.tracer.active.received(id, event);
      const check = rule.cfg.payloadCheck;
      if (check !== undefined) {
        const problem = check(msg.payload);
        if (problem !== undefined) {
          this.ruleFailed(rule, event, 'schema_invalid', problem, settlement);
          continue;
        }
      } else if (rule.cfg.payloadFormat === 'json' && ctx.decodedPayload() === undefined) {
        this.ruleFailed(rule, event, 'invalid_payload', invalidPayloadError(ctx), settlement);
        continue;
      }
      let result: EvalResult | Promise<EvalResult>;
      try {
        // The router matched the topic against this rule's filters: no second FROM check.
        result = rule.cfg.compiled.evaluateRouted(ctx, id);
      } catch (err) {
        this.ruleFailed(rule, event, 'rule_exception', errorText(err), settlement);
        continue;
      }
      if (result instanceof Promise) {
        settlement.hold();
        result.then(
          (r) => {
            this.dispatch(rule, r, event, settlement);
            settlement.release();
          },
          (err: unknown) => {
            this.ruleFailed(rule, event, 'rule_exception', errorText(err), settlement);
            settlement.release();
          },
        );
      } else {
        this.dispatch(rule, result, event, settlement);
      }
    }
    settlement.release();
  }

  /** Sends a rule's outputs to its actions, each held in `settlement` until it is durable. */
  private dispatch(rule: LiveRule, result: EvalResult, event: RuleEvent, settlement: Settlement): void {
    const c = rule.counters;
    if (this.tracer.active !== undefined) this.tracer.active.output(rule.cfg.id, event, result, rule.actions.length);
    if (!result.matched || result.outputs.length === 0) {
      c.failed.inc();
      c.failedNoResult.inc();
      return;
    }
    c.passed.inc();
    const bytes = event.payload.length;
    for (const record of result.outputs) {
      for (const a of rule.actions) {
        settlement.hold();
        a.runner.enqueue(a.handle, record, event, bytes, settlement);
      }
    }
  }

  /** Counts a rule's failure on a message and dead-letters the message, held in `settlement` until that is durable. */
  private ruleFailed(rule: LiveRule, event: RuleEvent, reason: DeadLetterReason, error: string, settlement: Settlement): void {
    const id = rule.cfg.id;
    rule.counters.failed.inc();
    rule.counters.failedException.inc();
    rule.lastError = { at: Date.now(), message: `${reason}: ${error}` };
    if (this.tracer.active !== undefined) this.tracer.active.finished(id, event, 'dead_lettered', undefined, { reason, error });
    this.log.debug({ rule: id, reason, err: error, topic: event.topic }, 'rule failed on a message; dead-lettering it');
    settlement.hold();
    this.putLetter(letterFor(event, { ruleId: id, sink: '', reason, error }), settlement);
  }

  /** Stores a letter of the message; releases the hold the caller took once it is durable. */
  private putLetter(letter: DeadLetter, settlement: Settlement): void {
    void this.dlq.put(letter).then(() => {
      settlement.deadLettered(letter);
      settlement.release();
    });
  }
}

/** Why a payload is not JSON, for its dead letter. */
function invalidPayloadError(ctx: MessageContext): string {
  const raw = rawPayloadOf(ctx);
  if (typeof raw !== 'string') return 'payload is not valid UTF-8, so not JSON (kept as received; set payload_format: raw to accept any payload)';
  if (raw.length === 0) return 'payload is empty, not JSON (set payload_format: raw to accept any payload)';
  return 'payload is not valid JSON (set payload_format: raw to accept any payload)';
}

function sameRule(a: RuleConfig, b: RuleConfig): boolean {
  return (
    a.source === b.source &&
    a.payloadFormat === b.payloadFormat &&
    a.payloadSchema === b.payloadSchema &&
    JSON.stringify(a.actions) === JSON.stringify(b.actions)
  );
}
