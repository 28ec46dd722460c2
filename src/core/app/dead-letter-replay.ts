// `weir dlq replay` and the console's replay: dead letters sent back through the current rules and actions, in-process,
// by the runtime's own Pipeline and SinkRunners (so a row is written, batched, retried, split
// around refusals and counted in weir_ledger exactly as a live message's), with nothing acked to
// any broker. Each letter becomes a message again (topic, payload, its original receive time) and
// goes only to the rule that dead-lettered it, and when a sink refused it only to that rule's
// actions on that sink: the other actions of the message already stored their outputs.
//
// When the message settles, its outcome (outputs stored, new dead letters) is written onto the
// letter replayed, together with the new letters, by LetterStore.markReplayed (one transaction in
// PostgreSQL). The runtime's dead-letter queue therefore keeps nothing here: the letters come back
// through the outcome. Until its mark is written a letter stays pending, so a replay cut short
// (Ctrl-C, a crash) is run again; a row stored before the cut is then written again, which the
// action's on_conflict absorbs as it absorbs a redelivered message.
import type { RuleConfig, WeirConfig } from '../../config/types.js';
import { besideConfig } from './dead-letter-place.js';
import { DeadLetterQueue } from '../path/dead-letter-queue.js';
import { reducedLetter, type DeadLetter, type DeadLetterStore } from '../../dead-letters/letter.js';
import type { InboundMessage } from '../ingest/message.js';
import { CallbackSettlement, type MessageOutcome } from '../ingest/ack-path.js';
import { Pipeline } from '../path/pipeline.js';
import { SinkRunner } from '../path/sink-runner.js';
import { errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import { createMetrics } from '../../metrics/names.js';
import { DEAD_LETTER_POLICY, sleep } from '../../retry/backoff.js';
import { stripShare, topicMatches } from '../../rules/topic.js';
import type { LetterFilter, LetterStore, ReplayMark, StoredLetter } from '../../dead-letters/letter-store.js';

export interface ReplayOptions {
  readonly filter: LetterFilter;
  /** Letters handed to the rules per second, at most. */
  readonly rate: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Called after each letter has ended. */
  readonly progress?: (s: ReplaySummary) => void;
  /** Told how each letter ended: stored, dead_lettered, no_output, or why it was skipped or failed (left pending). */
  readonly outcome?: (letter: StoredLetter, outcome: string) => void;
}

export interface ReplaySummary {
  /** Pending letters read. */
  selected: number;
  stored: number;
  deadLettered: number;
  noOutput: number;
  /** Left pending: no current rule or action to send them to (why → how many). */
  skipped: Map<string, number>;
  /** Left pending: the run was interrupted, or the mark could not be written (errors: the first few). */
  failed: number;
  errors: string[];
  /** The reasons of the letters written by this replay → how many. */
  newReasons: Map<string, number>;
}

/** Where a letter goes: a pipeline of its rule (and sink) alone, or why it cannot be replayed now. */
type Route = { readonly pipeline: Pipeline; readonly rules: readonly RuleConfig[] } | { readonly skip: string };

/** The runtime's queue hands each letter back through the message's outcome; the replay stores it. */
const HANDED_BACK: DeadLetterStore = { write: async () => undefined, classify: () => 'retry' };

/** Messages replayed at once at most, whatever the rate: bounds memory while a sink is slow. */
const MAX_IN_FLIGHT = 1000;
const PAGE = 500;
const KEPT_ERRORS = 5;

export async function replay(cfg: WeirConfig, store: LetterStore, opts: ReplayOptions): Promise<ReplaySummary> {
  const r = new Replayer(cfg, store, opts);
  try {
    return await r.run();
  } finally {
    await r.close();
  }
}

class Replayer {
  private readonly summary: ReplaySummary = {
    selected: 0,
    stored: 0,
    deadLettered: 0,
    noOutput: 0,
    skipped: new Map(),
    failed: 0,
    errors: [],
    newReasons: new Map(),
  };
  private readonly metrics = createMetrics();
  private readonly abort = new AbortController();
  private readonly aborted: Promise<undefined>;
  private readonly runners = new Map<string, SinkRunner>();
  private readonly connecting = new Map<string, Promise<void>>();
  private readonly routes = new Map<string, Promise<Route>>();
  private readonly dlq: DeadLetterQueue;

  constructor(
    private readonly cfg: WeirConfig,
    private readonly store: LetterStore,
    private readonly opts: ReplayOptions,
  ) {
    const signal = this.abort.signal;
    opts.signal.addEventListener('abort', () => this.abort.abort(), { once: true });
    this.aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    const dlq = new DeadLetterQueue(HANDED_BACK, DEAD_LETTER_POLICY, this.metrics, opts.log, signal, besideConfig(cfg, cfg.deadLetter.fallback_file));
    this.dlq = dlq;
    for (const sc of cfg.sinks.values()) {
      // Its own writer name in weir_ledger: a replay never waits on the ledger rows of a running replica.
      const sink = sc.sinkType.create(sc.settings, {
        name: sc.name,
        log: opts.log.child({ sink: sc.name }),
        instance: `${cfg.broker.client_id}-dlq`,
        broker: cfg.broker,
      });
      this.runners.set(sc.name, new SinkRunner(sc, sink, dlq, this.metrics, opts.log, signal));
    }
  }

  async run(): Promise<ReplaySummary> {
    const interval = 1000 / this.opts.rate;
    const inFlight = new Set<Promise<void>>();
    let next = Date.now();
    pages: for await (const page of this.store.pages({ ...this.opts.filter, state: 'pending' }, PAGE)) {
      for (const letter of page) {
        if (this.abort.signal.aborted) break pages;
        // Paced, not bursty: a replay that fell behind (a slow sink) does not catch up at once.
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait, this.abort.signal);
        next = Math.max(next, Date.now()) + interval;
        while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
        const p: Promise<void> = this.replayOne(letter).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    }
    await Promise.all(inFlight);
    return this.summary;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await Promise.all([...this.runners.values()].map((r) => r.close().catch(() => undefined)));
  }

  private async replayOne(letter: StoredLetter): Promise<void> {
    const s = this.summary;
    s.selected++;
    try {
      const route = await this.route(letter);
      if ('skip' in route) return this.skipped(letter, route.skip);
      if (!reads(route.rules, letter.topic)) return this.skipped(letter, `rule ${letter.ruleId} does not read the letter's topic now`);
      const outcome = await Promise.race([this.send(route.pipeline, letter), this.aborted]);
      if (!outcome) return this.failed(letter, 'interrupted before it settled');
      await this.mark(letter, outcome);
    } catch (err) {
      this.failed(letter, errorText(err));
    } finally {
      this.opts.progress?.(s);
    }
  }

  private send(pipeline: Pipeline, letter: StoredLetter): Promise<MessageOutcome> {
    const msg: InboundMessage = {
      topic: letter.topic,
      payload: letter.payload,
      qos: 1,
      retain: false,
      dup: false,
      properties: undefined,
      receivedAt: letter.receivedAt,
    };
    return new Promise((resolve) => pipeline.handle(msg, new CallbackSettlement(resolve)));
  }

  /** Writes the outcome onto the letter, with the letters the replay produced; a refused letter is written reduced. */
  private async mark(letter: StoredLetter, outcome: MessageOutcome): Promise<void> {
    const mark = markFor(outcome);
    let written: readonly DeadLetter[] = outcome.letters;
    let done: boolean;
    try {
      done = await this.store.markReplayed(letter, mark, written);
    } catch (err) {
      if (!written.length || this.store.classify(err) === 'retry') throw err;
      this.opts.log.warn({ id: letter.id, err: errorText(err) }, 'the store refused the letters of a replay; writing them reduced');
      written = written.map((l) => reducedLetter(l, err));
      done = await this.store.markReplayed(letter, mark, written);
    }
    if (!done) return this.failed(letter, 'already marked by another replay');
    const s = this.summary;
    this.opts.outcome?.(letter, mark.outcome);
    if (mark.outcome === 'stored') s.stored++;
    else if (mark.outcome === 'no_output') s.noOutput++;
    else s.deadLettered++;
    for (const l of written) s.newReasons.set(l.reason, (s.newReasons.get(l.reason) ?? 0) + 1);
  }

  private skipped(letter: StoredLetter, why: string): void {
    this.opts.outcome?.(letter, `skipped: ${why}`);
    this.summary.skipped.set(why, (this.summary.skipped.get(why) ?? 0) + 1);
  }

  private failed(letter: StoredLetter, why: string): void {
    this.opts.outcome?.(letter, `failed: ${why}`);
    this.summary.failed++;
    if (this.summary.errors.length < KEPT_ERRORS) this.summary.errors.push(`letter ${letter.id}: ${why}`);
  }

  /** The pipeline of a letter's rule(s) and sink, built and connected once per pair. */
  private route(letter: StoredLetter): Promise<Route> {
    const key = `${letter.ruleId}\u0000${letter.sink}`;
    let route = this.routes.get(key);
    if (!route) {
      route = this.buildRoute(letter);
      this.routes.set(key, route);
    }
    return route;
  }

  private async buildRoute(letter: StoredLetter): Promise<Route> {
    const rules: RuleConfig[] = [];
    for (const id of letter.ruleId.split(',')) {
      const rule = this.cfg.rules.find((r) => r.id === id && r.enabled);
      if (!rule) continue;
      // Refused by one sink: only that sink's actions; the rule's others stored their outputs.
      const actions = letter.sink ? rule.actions.filter((a) => a.sink === letter.sink) : rule.actions;
      if (actions.length) rules.push({ ...rule, actions });
    }
    if (!rules.length) {
      const via = letter.sink ? ` with an action on sink ${letter.sink}` : '';
      return { skip: `no enabled rule ${letter.ruleId}${via} in ${this.cfg.rulesDir}` };
    }
    const pipeline = new Pipeline(this.cfg.broker, this.cfg.node, this.runners, this.dlq, this.metrics, this.opts.log);
    pipeline.setRules(rules);
    await Promise.all([...new Set(rules.flatMap((r) => r.actions.map((a) => a.sink)))].map((name) => this.connect(name)));
    return { pipeline, rules };
  }

  /** Connects a sink once; a sink that cannot be reached ends the replay (its letters would only wait). */
  private connect(name: string): Promise<void> {
    let p = this.connecting.get(name);
    if (!p) {
      p = this.runners
        .get(name)!
        .sink.connect(this.abort.signal)
        .catch((err: unknown) => {
          this.abort.abort();
          throw new Error(`cannot connect to sink ${name}: ${errorText(err)}`);
        });
      this.connecting.set(name, p);
    }
    return p;
  }
}

/** Whether one of the rules reads the topic: a letter no rule reads now stays pending, as its FROM may be fixed. */
function reads(rules: readonly RuleConfig[], topic: string): boolean {
  return rules.some((r) => r.compiled.filters.some((f) => topicMatches(stripShare(f), topic)));
}

function markFor(outcome: MessageOutcome): ReplayMark {
  const at = Date.now();
  if (outcome.letters.length) {
    const note = [...new Set(outcome.letters.map((l) => `${l.reason}: ${l.error}`))].join('; ');
    return { at, outcome: 'dead_lettered', note };
  }
  return { at, outcome: outcome.stored > 0 ? 'stored' : 'no_output', note: undefined };
}
