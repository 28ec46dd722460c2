// The contract between the core (batching, retries, dead-letters, metrics, acks: written once in
// src/core/) and a sink driver (one folder per sink under src/sinks/). A driver only turns a batch
// into a write and says which errors are worth retrying. It never imports the metrics library and
// never acks anything: the core does that when write() resolves.

import type { TSchema } from '@sinclair/typebox';
import type { DeadLetter } from '../dead-letters/letter.js';
import type { LetterStore } from '../dead-letters/letter-store.js';
import type { Logger } from '../log.js';
import type { OutputRecord, RuleEvent } from '../rules/types.js';
import type { BrokerConfig } from '../config/schema.js';

/** How the core treats an error a driver raised or reported (defined beside the error catalogue). */
export type { ErrorClass } from '../error-codes.js';
import type { CoreErrorCode, ErrorClass, ErrorInfo } from '../error-codes.js';

/** What one rule output carries into a sink. */
export interface SinkInput {
  /** The rule's output record. */
  readonly record: OutputRecord;
  /** The message it came from (topic, payload, clientid, timestamps). */
  readonly event: RuleEvent;
  /** The rule that produced it. */
  readonly ruleId: string;
}

/** Partial failure is a result, not an exception. Items in neither list were written durably. */
export interface WriteResult {
  /** Items the sink refused for good; the core dead-letters them with `error`. */
  readonly rejected: ReadonlyArray<{ index: number; error: Error }>;
  /** Items that hit a transient error; the core retries them with backoff. */
  readonly retry: ReadonlyArray<number>;
  /** The error behind `retry`, for logs and the retry counter's reason. */
  readonly retryError?: Error;
}

export const ALL_WRITTEN: WriteResult = Object.freeze({ rejected: [], retry: [] });

/** An action binds one rule's outputs to one sink: the sink-specific part (table, columns, key…). */
export interface BoundAction<Item> {
  /** Turns one output into the item the driver writes. Throws to reject the output (dead-letter). */
  encode(input: SinkInput): Item;
  /**
   * Where the items go, as far as batching is concerned: the actions of one sink that give the
   * same key share one batch stream, so write() gets items of several actions, and rules, in one
   * batch. The key must hold everything that keeps two items out of one write (PostgreSQL: the
   * table, its mapped columns and on_conflict; Kafka: the topic). Without one, the action has a
   * batch stream of its own.
   */
  readonly batchKey?: string;
  /**
   * What was sent, for the dead letter of an item refused after encoding (the core does not keep
   * the output record that long): a row's columns, a message's key, properties and payload.
   */
  describe?(item: Item): OutputRecord;
}

export interface Sink<ActionCfg = unknown, Item = unknown> {
  /** Compiles an action's templates once, when rules load. Throws a WeirError for bad settings. */
  bind(action: ActionCfg, ruleId: string): BoundAction<Item>;
  /** Opens connections. No network I/O happens before this. */
  connect(signal: AbortSignal): Promise<void>;
  /**
   * Writes one batch. Resolves when every item not listed in the result is durable (committed,
   * acknowledged by the broker). Throwing means nothing of the batch is known durable; the core
   * classifies the error and retries or rejects the whole batch.
   */
  write(items: Item[], signal: AbortSignal): Promise<WriteResult>;
  /** Cheap health check for /readyz; throws when the service cannot be reached. */
  probe(signal: AbortSignal): Promise<void>;
  /** Classifies a driver error (one place per sink, see classify.ts in the sink's folder). */
  classify(err: unknown): ErrorClass;
  /**
   * What an operator must fix, in a few words, for an error classified `fatal` ('schema error',
   * 'authentication error'): the log and /sinks lead with it. Default: 'fatal error'.
   */
  fatalKind?(err: unknown): string;
  /** Stores dead letters durably, when the sink can (PostgreSQL: a table). */
  deadLetter?(letters: DeadLetter[], signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface SinkDeps {
  /** The sink's name in weir.yaml (`sinks.<name>`). */
  readonly name: string;
  readonly log: Logger;
  /** This replica's stable id (its broker client id), for what a sink records per writer. */
  readonly instance?: string;
  /** The broker weir reads from (weir.yaml's `broker`), for a sink that publishes to it (mqtt). */
  readonly broker?: BrokerConfig;
}

/** What a sink type's `lint` found wrong in its settings, and what to write instead. */
export interface SettingProblem {
  /** The key it is about, below `sinks.<name>` (['acks'], ['brokers', 0]). */
  readonly path: ReadonlyArray<string | number>;
  /** The problem and what to write instead ('scheme must be postgres://…, e.g. …'). */
  readonly message: string;
  /** The value, shown beside the key (a URL's password is redacted when shown). */
  readonly value?: string;
  /** Error code (docs/errors.md); default config.invalid_value. */
  readonly code?: CoreErrorCode;
}

/** What lintAction knows of an action's rule and sink. */
export interface ActionContext<Cfg> {
  /** The rule's FROM topic filters, as written. */
  readonly filters: readonly string[];
  /** The settings of the sink the action writes to. */
  readonly sink: Cfg;
  /** The broker weir reads from (weir.yaml's `broker`), when the caller has it. */
  readonly broker?: BrokerConfig;
}

/** One action of a rule on a sink, as `weir reconcile` hands it to the sink type's `count`. */
export interface ActionOf<ActionCfg> {
  readonly rule: string;
  readonly settings: ActionCfg;
}

export interface CountContext {
  /** The sink's name in weir.yaml (what its ledger rows are recorded under). */
  readonly sink: string;
  /** Says what a long count is doing ('counting rows of telemetry…'). */
  progress(text: string): void;
}

/** What a sink's own system holds in one target (a table, a topic), for `weir reconcile`. */
export interface TargetCount {
  /** Table or topic. */
  readonly target: string;
  /** The rules writing it: those of the rule files, and earlier ones a ledger still names. */
  readonly rules: readonly string[];
  /** What the target holds (rows, messages); undefined when it cannot be counted (`note` says why). */
  readonly held?: number;
  /**
   * What the sink's own ledger says each rule stored there, kept by the sink in the same commit
   * as the data (PostgreSQL's weir_ledger). Without one, reconcile compares `held` with the
   * instances' success counters from --metrics.
   */
  readonly ledger?: ReadonlyMap<string, number>;
  /** The dead letters the sink itself keeps, per rule. */
  readonly deadLettered?: ReadonlyMap<string, number>;
  readonly note?: string;
}

/** What a sink type's `migrate` did: for `weir migrate` and `migrate_on_start`. */
export interface MigrateReport {
  /** Where, for the output line (a URL without its password). */
  readonly target: string;
  /** Steps applied this time (a migration file's name, 'telemetry: retention policy added …'). */
  readonly applied: string[];
  /** Steps that were done before and so skipped. */
  readonly alreadyApplied: number;
  /** Why something could not be done, not an error ('no timescaledb extension: plain tables'). */
  readonly notes: string[];
}

/** One rule action, as `verify` sees it: where it is written, and outputs to try its mapping on. */
export interface ActionToVerify {
  readonly ruleId: string;
  /** `rules/x.yaml:12`: the action's place, for the problem's line. */
  readonly at: string;
  /** The place of a key inside the action (['columns', 'temp']), or `at` when it cannot be found. */
  atKey(path: ReadonlyArray<string | number>): string;
  /** The action's settings, validated against the type's actionSchema. */
  readonly settings: unknown;
  /** Outputs of the rule's own tests (their events through its SQL), to check the values' types. */
  readonly samples: readonly SinkInput[];
}

/** What `verify` knows beyond the sink's settings. */
export interface VerifyOptions {
  /** Whether this sink stores the dead letters (weir.yaml's dead_letter names it). */
  readonly deadLetters: boolean;
  /** The sink's name in weir.yaml (`sinks.<name>`). */
  readonly sink: string;
  /** The broker weir reads from (weir.yaml's `broker`), for a sink that publishes to it (mqtt). */
  readonly broker?: BrokerConfig;
}

/** Something a sink lacks that the rules need: one line, and what to do about it when known. */
export interface VerifyProblem {
  /** `rules/x.yaml:12: table hot_samples does not exist` or, with no rule, the sink's own need. */
  readonly message: string;
  /** A fix to print below it, as is (a CREATE TABLE). */
  readonly suggestion?: string;
}

/** A sink type: its config schemas (the single source of its fields) and its factory. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds sink types of different settings; each is typed where it is defined.
export interface SinkType<Cfg = any, ActionCfg = any, Item = any> {
  /** The folder name, the `type:` in weir.yaml, the registry key and the metric label. */
  readonly type: string;
  /** Schema of `sinks.<name>` in weir.yaml (without the shared `type`/`batch`/`retry` keys). */
  readonly configSchema: TSchema;
  /** Schema of an action of this sink in a rule file (without the shared `sink` key). */
  readonly actionSchema: TSchema;
  /**
   * The error codes the sink raises (`sink.<type>.…`), from its errors.ts: the 'Sinks' section of
   * docs/errors.md lists them (src/sinks/error-catalogue.ts), and the sink's error class reads
   * their class.
   */
  readonly errorCodes?: Readonly<Record<string, ErrorInfo>>;
  /**
   * What the schema cannot say: whether a URL can work, settings that contradict each other. The
   * loader calls it on settings that passed configSchema, so `weir check` and `weir run` report the
   * same problems, each at its key's file:line:col, before anything connects.
   */
  lint?(cfg: Cfg): SettingProblem[];
  /**
   * What an action's settings mean for its rule that neither schema can say (mqtt: republishing
   * into a topic the rule's own FROM matches): each problem at its key below the action, for
   * `weir check` and `weir run` alike. Called on settings that passed both schemas.
   */
  lintAction?(action: ActionCfg, ctx: ActionContext<Cfg>): SettingProblem[];
  create(cfg: Cfg, deps: SinkDeps): Sink<ActionCfg, Item>;
  /**
   * Brings the service up to what weir needs (PostgreSQL: migrations/, hypertables): `weir migrate`
   * and `migrate_on_start`. `dir` replaces the package's migrations directory; `signal` ends an
   * attempt under way (weir run stopped while it waits for the service).
   */
  migrate?(cfg: Cfg, opts: { dir?: string; signal?: AbortSignal }): Promise<MigrateReport>;
  /**
   * Connects and checks that what the actions need is there (tables, columns and their types,
   * topics) and, when `deadLetters` is set, that this sink can store dead letters: `weir check
   * --connect`, and `weir run` at start. Rejects only when the service cannot be reached.
   */
  verify?(cfg: Cfg, actions: readonly ActionToVerify[], opts: VerifyOptions, signal: AbortSignal): Promise<VerifyProblem[]>;
  /**
   * Whether a sink with these settings keeps dead letters (its Sink has `deadLetter`, and
   * letterStore reads them): always for some types, by a setting for others. Absent: never.
   */
  keepsLetters?(cfg: Cfg): boolean;
  /** The dead letters a sink of this type keeps, for `weir dlq`; only when keepsLetters says so. Opens no connection yet. */
  letterStore?(cfg: Cfg, deps: SinkDeps): LetterStore;
  /**
   * For `weir reconcile`: what the sink's own system holds in each target the actions write,
   * asked of that system (a count(*), the topic's offsets or the broker's counters). Throws when
   * it cannot be reached; reconcile reports that on the sink's line.
   */
  count?(cfg: Cfg, actions: ReadonlyArray<ActionOf<ActionCfg>>, ctx: CountContext): Promise<TargetCount[]>;
  /** Offered by a type that stores rows in PostgreSQL tables (see SqlTables). */
  readonly sqlTables?: SqlTables<Cfg, ActionCfg>;
}

/**
 * A capability of a sink type that stores rows in PostgreSQL tables, for what reads those tables
 * directly (`weir reconcile --sequence`): where to connect, and which table an action writes.
 */
export interface SqlTables<Cfg, ActionCfg> {
  /** The PostgreSQL connection URL of a sink with these settings. */
  url(cfg: Cfg): string;
  /** The table an action with these settings writes. */
  tableOf(action: ActionCfg): string;
}
