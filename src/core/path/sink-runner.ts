// Everything a sink needs besides its driver, written once: batching per write target, a bounded
// number of batches in flight (p-queue), retries with backoff, splitting a batch around the items
// the sink rejects, dead-lettering them, readiness, and the counters. A driver only writes a batch.
//
// Actions that write to the same place share one batch stream: the sink says which through its
// bound action's batchKey (a table and its columns, a topic). 100 rules into one table thus make
// one stream of full batches rather than 100 streams of a hundredth of the size, each with its own
// timer and write (docs/benchmarks.md, cost as work grows). Everything per item stays per action:
// each item carries its action, whose counters (the action's, and its rule's actions.total/success/
// failed), dead letters and rule it is told.
import PQueue from 'p-queue';
import type { SinkConfig } from '../../config/types.js';
import { errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import { actionCounters, type ActionCounters, type DeadLetterReason, type Metrics, type RuleCounters } from '../../metrics/names.js';
import { backoffMs, fatalBackoffMs, sleep } from '../../retry/backoff.js';
import type { OutputRecord } from '../../rules/types.js';
import type { BoundAction, ErrorClass, Sink, SinkInput, WriteResult } from '../../sinks/types.js';
import type { ItemWaiter } from '../ingest/ack-path.js';
import { Batcher } from './batcher.js';
import { letterFor } from '../../dead-letters/letter.js';
import type { DeadLetterQueue } from './dead-letter-queue.js';
import { SinkHealth, type SinkHealthStatus } from './sink-health.js';
import { Tracer } from './trace.js';
import { WriteWindow } from './write-window.js';

/**
 * One item from enqueue to its end. It is also the SinkInput the encoder reads, so an item costs
 * one object: items live until their batch commits, and what they hold is what the garbage
 * collector copies. Once encoded it lets go of the rule's output record (see enqueue).
 */
class Entry {
  item: unknown = undefined;

  constructor(
    /** The rule's output until the item is encoded from it. */
    public record: SinkInput['record'] | undefined,
    readonly event: SinkInput['event'],
    /** The action the item came from: its counters, its dead letters, its rule. */
    readonly action: ActionHandle,
    readonly waiter: ItemWaiter,
  ) {}

  get ruleId(): string {
    return this.action.ruleId;
  }
}

/** The batch stream of one write target, shared by the actions whose bound action names it. */
class BatchStream {
  /** Actions bound to it; at 0 it is flushed and forgotten. */
  users = 0;

  constructor(
    readonly key: unknown,
    readonly batcher: Batcher<Entry>,
  ) {}
}

/** A rule's action bound to this sink: its encoder, the batch stream it shares, its and its rule's counters. */
export class ActionHandle {
  constructor(
    readonly ruleId: string,
    readonly bound: BoundAction<unknown>,
    readonly stream: BatchStream,
    readonly counters: ActionCounters,
    readonly ruleCounters: RuleCounters,
  ) {}
}

export class SinkRunner {
  readonly name: string;
  private readonly queue: PQueue;
  /** Batch streams by their key: a sink's batchKey, or the action itself when it gives none. */
  private readonly streams = new Map<unknown, BatchStream>();
  private readonly health: SinkHealth;
  /** The last writes' durations and sizes, for the console (write-window.ts). */
  readonly writes = new WriteWindow();

  constructor(
    readonly cfg: SinkConfig,
    readonly sink: Sink,
    private readonly dlq: DeadLetterQueue,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
    /** Tested once per item: undefined `active` when no one traces (trace.ts). */
    private readonly tracer = new Tracer(),
  ) {
    this.name = cfg.name;
    this.queue = new PQueue({ concurrency: cfg.max_in_flight });
    this.health = new SinkHealth(this.name, log, metrics.sinkUp.labels(this.name));
    // Exported from the start (count 0), as the counters are: a rate over them is 0, not empty.
    metrics.batchLatency.zero({ sink: this.name });
    metrics.batchSize.zero({ sink: this.name });
  }

  get ready(): boolean {
    return this.health.ready;
  }

  /** For /sinks and /readyz. `up` and `last_error` are kept for readers of the older shape. */
  get status(): SinkHealthStatus & { up: boolean; last_error: string; pending_batches: number } {
    const h = this.health.status();
    return { up: h.ready, last_error: h.reason, ...h, pending_batches: this.queue.size + this.queue.pending };
  }

  /** The last error of a connect, probe or write, and when (kept after the sink recovers). */
  get lastError(): { readonly at: number; readonly message: string } | undefined {
    return this.health.lastError;
  }

  /** Connects, retrying with backoff until it succeeds or the runner is stopped. */
  async connect(): Promise<void> {
    for (let attempt = 1; !this.signal.aborted; attempt++) {
      try {
        await this.sink.connect(this.signal);
        this.health.reachable();
        return;
      } catch (err) {
        if (this.signal.aborted) return;
        // Wrong credentials or a missing database: said as such, and retried slowly.
        const kind = this.fatalKind(err);
        this.health.unreachable(err, kind);
        await sleep((kind ? fatalBackoffMs : backoffMs)(this.cfg.retry, attempt), this.signal);
      }
    }
  }

  /** Checks the sink for /readyz (called periodically). */
  async probe(): Promise<void> {
    try {
      await this.sink.probe(this.signal);
      this.health.reachable();
    } catch (err) {
      if (!this.signal.aborted) this.health.unreachable(err, this.fatalKind(err));
    }
  }

  bind(ruleId: string, settings: Record<string, unknown>, ruleCounters: RuleCounters): ActionHandle {
    const bound = this.sink.bind(settings, ruleId) as BoundAction<unknown>;
    const counters = actionCounters(this.metrics, { sink: this.name, rule: ruleId });
    const key = bound.batchKey ?? bound;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new BatchStream(key, new Batcher<Entry>(this.cfg.batch, (batch) => this.submit(batch)));
      this.streams.set(key, stream);
    }
    stream.users++;
    return new ActionHandle(ruleId, bound, stream, counters, ruleCounters);
  }

  /**
   * Forgets an action after a reload removed it. Its items already queued stay in the stream and
   * are written with the others; a stream no action uses any more is flushed and forgotten.
   */
  unbind(handle: ActionHandle): void {
    const stream = handle.stream;
    if (--stream.users > 0) return;
    stream.batcher.flushNow();
    this.streams.delete(stream.key);
  }

  /**
   * Hands one rule output to the action; `waiter` is told once it is stored or dead-lettered.
   * `bytes` is what the output weighs for the batch's byte limit.
   */
  enqueue(handle: ActionHandle, record: SinkInput['record'], event: SinkInput['event'], bytes: number, waiter: ItemWaiter): void {
    handle.ruleCounters.actionsTotal.inc();
    handle.counters.matched.inc();
    const entry = new Entry(record, event, handle, waiter);
    try {
      entry.item = handle.bound.encode(entry as SinkInput);
    } catch (err) {
      // Counted in flight until the dead letter is stored, so matched = success + failed +
      // dead_lettered + queuing + inflight holds at every scrape.
      handle.counters.inflight.inc();
      void this.deadLetter([entry], 'encode_error', err, true);
      return;
    }
    // The item now carries what the sink needs. The record is not kept for the item's whole wait
    // for its batch and the sink's receipt: for a 1 KB payload it is about 1 KB of heap per
    // message in flight, copied by every young-generation collection it lives through (Pulsar
    // benchmark, 4 runs each: GC 8.2 -> 6.0-6.9 µs and weir 35-38 -> 27-34 µs per message). A
    // dead letter written after this shows what was sent (the action's describe()) instead.
    if (this.tracer.active !== undefined) this.tracer.active.rendered(handle.ruleId, event, this.name, () => describe(handle.bound, entry.item) ?? record);
    entry.record = undefined;
    handle.counters.queuing.inc();
    handle.stream.batcher.add(entry, bytes);
  }

  /** Flushes every batch and resolves when nothing of this sink is queued or in flight. */
  async flush(): Promise<void> {
    for (const s of this.streams.values()) s.batcher.flushNow();
    await this.queue.onIdle();
  }

  async close(): Promise<void> {
    await this.sink.close();
  }

  private submit(batch: Entry[]): void {
    byAction(batch, (a, n) => {
      a.counters.queuing.dec(n);
      a.counters.inflight.inc(n);
    });
    void this.queue.add(() => this.writeBatch(batch, 1));
  }

  /** Writes a batch until every entry is stored or dead-lettered. */
  private async writeBatch(batch: Entry[], attempt: number): Promise<void> {
    const m = this.metrics;
    const started = performance.now();
    let result: WriteResult;
    try {
      result = await this.sink.write(
        batch.map((e) => e.item),
        this.signal,
      );
    } catch (err) {
      const cls = safeClassify(this.sink, err);
      if (cls === 'reject') {
        // The batch holds an item the sink refuses: split it until the bad ones stand alone, so
        // every good item is stored and only the bad ones are dead-lettered.
        if (batch.length === 1) return this.deadLetter(batch, 'rejected', err, true);
        const mid = batch.length >> 1;
        await this.writeBatch(batch.slice(0, mid), attempt);
        await this.writeBatch(batch.slice(mid), attempt);
        return;
      }
      return this.retryLater(batch, attempt, err, cls);
    }
    const ms = performance.now() - started;
    m.batchLatency.labels(this.name).observe(ms / 1000);
    m.batchSize.labels(this.name).observe(batch.length);
    this.writes.add(ms, batch.length);
    // Up only when the sink took something: a result that asks to retry every item is an outage.
    if (result.retry.length < batch.length) for (const rule of rulesOf(batch)) this.health.wrote(rule);
    const failed = result.retry.length || result.rejected.length ? new Set<number>([...result.retry, ...result.rejected.map((r) => r.index)]) : undefined;
    const stored = failed ? batch.filter((_, i) => !failed.has(i)) : batch;
    byAction(stored, (a, n) => {
      a.counters.success.inc(n);
      a.counters.inflight.dec(n);
      a.ruleCounters.actionsSuccess.inc(n);
    });
    for (const e of stored) e.waiter.itemDone('stored');
    // The trace read once: the item that ends it leaves `active` undefined for the rest of the batch.
    const trace = this.tracer.active;
    if (trace !== undefined) for (const e of stored) trace.finished(e.ruleId, e.event, 'stored', this.name);
    for (const r of result.rejected) await this.deadLetter([batch[r.index]!], 'rejected', r.error, true);
    if (result.retry.length) {
      await this.retryLater(
        result.retry.map((i) => batch[i]!),
        attempt,
        result.retryError ?? new Error('sink asked to retry'),
        'retry',
      );
    }
  }

  private async retryLater(batch: Entry[], attempt: number, err: unknown, cls: ErrorClass): Promise<void> {
    const rules = rulesOf(batch);
    // The health logs the problem once and then at most once a minute; each retry only at debug.
    if (cls === 'fatal') for (const rule of rules) this.health.failing(rule, this.fatalKind(err) ?? 'fatal error', err);
    else this.health.unreachable(err);
    const max = this.cfg.retry.max_attempts;
    if (max > 0 && attempt >= max) return this.deadLetter(batch, 'retries_exhausted', err, true);
    this.log.debug({ sink: this.name, rules, class: cls, attempt, items: batch.length, err: errorText(err) }, 'write failed; will retry');
    // An error an operator must fix is retried slowly (up to FATAL_MAX_MS), a transient one soon.
    await sleep((cls === 'fatal' ? fatalBackoffMs : backoffMs)(this.cfg.retry, attempt), this.signal);
    if (this.signal.aborted) {
      // Shutting down: these items end here unstored; their messages stay unacked and the broker
      // redelivers them to the next session.
      for (const e of batch) {
        e.action.counters.failed.inc();
        e.action.counters.inflight.dec();
        if (this.tracer.active !== undefined) this.tracer.active.finished(e.ruleId, e.event, 'failed', this.name, { error: 'stopped before it was stored' });
      }
      return;
    }
    for (const e of batch) e.action.counters.retried.inc();
    await this.writeBatch(batch, attempt + 1);
  }

  /** For an error an operator must fix, what to fix ('schema error'); undefined for any other. */
  private fatalKind(err: unknown): string | undefined {
    if (safeClassify(this.sink, err) !== 'fatal') return undefined;
    try {
      return this.sink.fatalKind?.(err) ?? 'fatal error';
    } catch {
      return 'fatal error';
    }
  }

  private async deadLetter(entries: Entry[], reason: DeadLetterReason, err: unknown, wasInflight = false): Promise<void> {
    const error = errorText(err);
    const letters = entries.map((e) =>
      letterFor(e.event, { ruleId: e.ruleId, sink: this.name, reason, error, record: e.record ?? describe(e.action.bound, e.item) }),
    );
    await Promise.all(letters.map((l) => this.dlq.put(l)));
    for (const [i, e] of entries.entries()) {
      e.action.counters.deadLettered.inc();
      if (wasInflight) e.action.counters.inflight.dec();
      e.action.ruleCounters.actionsFailed.inc();
      e.waiter.itemDone('dead_lettered', letters[i]);
      if (this.tracer.active !== undefined) this.tracer.active.finished(e.ruleId, e.event, 'dead_lettered', this.name, { reason, error });
    }
  }
}

/**
 * Calls `each` with every run of consecutive entries of one action and its length: a batch is
 * usually one action's, and a counter moved once per run instead of once per item keeps the
 * shared batches' per-action counting off the per-item path.
 */
function byAction(entries: readonly Entry[], each: (action: ActionHandle, n: number) => void): void {
  let run = 0;
  for (let i = 0; i < entries.length; i++) {
    run++;
    const a = entries[i]!.action;
    if (entries[i + 1]?.action !== a) {
      each(a, run);
      run = 0;
    }
  }
}

/** The rules whose items a batch holds (one, unless actions of several rules share the stream). */
function rulesOf(batch: readonly Entry[]): string[] {
  const first = batch[0]?.ruleId;
  if (first === undefined) return [];
  let rules: Set<string> | undefined;
  for (const e of batch) if (e.ruleId !== first) (rules ??= new Set([first])).add(e.ruleId);
  return rules ? [...rules] : [first];
}

function safeClassify(sink: Sink, err: unknown): ErrorClass {
  // Programming errors are never worth retrying.
  if (err instanceof TypeError || err instanceof RangeError) return 'reject';
  try {
    return sink.classify(err);
  } catch {
    return 'retry';
  }
}

/** What a dead letter (or the console) shows of an encoded item: the row or message it is; never throws. */
export function describe(bound: BoundAction<unknown>, item: unknown): OutputRecord | undefined {
  if (item === undefined || !bound.describe) return undefined;
  try {
    return bound.describe(item);
  } catch {
    return undefined;
  }
}
