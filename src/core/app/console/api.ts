// The console's JSON API (docs/console.md): what weir's HTTP server answers under /api/ and what
// the page (console/) reads. Types only, shared by the server (src/core/app/console/) and the page,
// so the two cannot drift. Times are epoch milliseconds; rates are per second.
//
//   GET  /api/overview                      Overview
//   GET  /api/rules                         RuleView[]
//   GET  /api/sinks                         SinkView[]
//   GET  /api/reconcile                     Reconcile
//   POST /api/try           TryRequest    → TryResult             (payload access, see Access)
//   POST /api/trace         TraceRequest  → TraceState            (payload access) starts a trace
//   GET  /api/trace                         TraceState            (payload access)
//   GET  /api/dead-letters?rule&sink&reason&since&until&limit     LetterList   (payload access)
//   GET  /api/dead-letters/<id>             LetterDetail          (payload access)
//   POST /api/dead-letters/replay  LetterAction → LetterActionResult (write access)
//   POST /api/dead-letters/purge   LetterAction → LetterActionResult (write access)
//
// Everything under /api/ needs http.basic_auth's credentials when they are set, like /metrics.
// A POST must carry `content-type: application/json` and `x-weir-console: 1` and, when the browser
// sends one, an Origin equal to the Host it was sent to: a cross-site form or fetch cannot.
// Errors: { error: string } with 400 (bad request), 401, 403 (access), 404, 409 (busy), 413.

/** What this client may do: payloads and writes only behind credentials or on loopback. */
export interface Access {
  /** Dead-letter payloads, traces and Try it. */
  readonly payloads: boolean;
  /** Replay and purge. */
  readonly writes: boolean;
  /** Why not, for the page to say (e.g. "set http.basic_auth or bind http.host to 127.0.0.1"). */
  readonly reason: string;
}

export interface ConnectionView {
  readonly client_id: string;
  readonly connected: boolean;
  readonly session_present: boolean;
  readonly unacked: number;
  readonly max_unacked: number;
}

/** One point of the in-memory history (one every 5 s, 15 minutes kept: 180 points). */
export interface HistoryPoint {
  readonly t: number;
  readonly messages_in: number; // per second over the step
  readonly rows_out: number; // per second: actions succeeded
  readonly dead_letters: number; // per second
  readonly rss_bytes: number;
  readonly cpu: number; // process CPU seconds per second (1 = one core)
}

export interface Overview {
  readonly version: string;
  readonly started_at: number;
  readonly now: number;
  readonly access: Access;
  readonly connections: readonly ConnectionView[];
  readonly messages_in_per_s: number;
  readonly rows_out_per_s: number;
  readonly dead_letters_total: number;
  readonly rss_bytes: number;
  readonly cpu: number;
  readonly history: readonly HistoryPoint[];
}

/** EMQX's names (rule statistics), as /metrics has them under weir_rule_*. */
export interface RuleCountersView {
  readonly matched: number;
  readonly passed: number;
  readonly failed: number;
  readonly 'failed.exception': number;
  readonly 'failed.no_result': number;
  readonly 'actions.total': number;
  readonly 'actions.success': number;
  readonly 'actions.failed': number;
}

export interface RuleView {
  readonly id: string;
  readonly state: 'running' | 'rejected';
  readonly file: string;
  readonly language: 'sql' | 'jsonata' | 'jq';
  readonly source: string;
  readonly filters: readonly string[];
  readonly actions: readonly string[];
  readonly counters: RuleCountersView;
  /** matched per second: over the last step, the last 5 minutes, and the highest step seen. */
  readonly rate: { readonly now: number; readonly avg_5m: number; readonly max: number };
  /** matched per second, one point per history step (oldest first). */
  readonly spark: readonly number[];
  readonly last_error?: { readonly at: number; readonly message: string };
  readonly reload_error?: { readonly at: number; readonly errors: readonly string[] };
}

export interface SinkView {
  readonly name: string;
  readonly type: string;
  readonly state: string;
  readonly ready: boolean;
  /** When the current state began. */
  readonly since: number;
  readonly last_error?: { readonly at: number; readonly message: string };
  readonly in_flight: number;
  readonly queued: number;
  readonly retries: number;
  /** Items per write: the mean over the last 5 minutes. */
  readonly batch_size: number;
  readonly write_ms: { readonly p50: number; readonly p99: number };
}

/** One rule × sink row of the live proof: hits = stored + dead_lettered + in_flight. */
export interface ReconcileRow {
  readonly rule: string;
  readonly sink: string;
  readonly hits: number;
  readonly stored: number;
  readonly dead_lettered: number;
  readonly in_flight: number;
  /** hits - stored - dead_lettered - in_flight: 0 is green. */
  readonly difference: number;
  /**
   * The sink's own count (SinkType.count: PostgreSQL's ledger rows for the rule), when the sink can
   * count: what it gained since the console's first count plus what weir had stored by then, so
   * sink_difference = sink_count - stored shows a difference that appears after it (docs/console.md).
   */
  readonly sink_count?: number;
  readonly sink_difference?: number;
}

export interface Reconcile {
  readonly at: number;
  readonly rows: readonly ReconcileRow[];
  readonly ok: boolean;
  /**
   * The sequence checks of weir.yaml's `console.sequence` (as `weir reconcile --sequence`), from
   * their last run; absent when none is configured.
   */
  readonly sequence?: SequenceChecks;
}

export interface SequenceChecks {
  /** When the last run ended (epoch ms); absent before the first one has. */
  readonly at?: number;
  readonly checks: readonly SequenceCheck[];
  /** Why the last run failed (the database unreachable, a column that does not exist). */
  readonly error?: string;
}

/** One table's check: `weir reconcile --sequence`'s result, as the page shows it. */
export interface SequenceCheck {
  /** TABLE:KEY:SEQ[:TIME] as configured. */
  readonly spec: string;
  readonly keys: number;
  readonly rows: number;
  /** Sequence numbers missing between each key's first and last: 0 is green. */
  readonly missing: number;
  readonly keys_with_gaps: number;
  readonly duplicates: number;
  /** Up to 10 keys with missing numbers, most first, with their first holes [from, to]. */
  readonly worst: ReadonlyArray<{ readonly key: string | null; readonly missing: number; readonly first_missing: ReadonlyArray<readonly [number, number]> }>;
  /** Silence at each key's tail; null without a time column. */
  readonly stale: {
    readonly after: number;
    /** Keys silent for more than `after` of their intervals: 0 is green. */
    readonly keys: number;
    /** Messages those keys would have sent since, estimated from their intervals. */
    readonly missing: number;
    readonly stalest: ReadonlyArray<{ readonly key: string | null; readonly silence_s: number; readonly interval_s: number; readonly missing: number }>;
  } | null;
}

export interface TryEvent {
  readonly topic: string;
  /** Text as sent, or base64 when `payload_encoding` is base64. */
  readonly payload: string;
  readonly payload_encoding?: 'text' | 'base64';
  readonly qos?: 0 | 1 | 2;
  readonly clientid?: string;
  readonly username?: string;
  readonly user_properties?: Readonly<Record<string, string>>;
}

export interface TryRequest {
  /** Either a rule's SQL (actions then name no sink: outputs only) or the id of a running rule. */
  readonly sql?: string;
  readonly rule?: string;
  readonly event: TryEvent;
}

export interface TryResult {
  readonly matched: boolean;
  readonly outputs: readonly unknown[];
  /** Per action of the rule: what the sink would write, rendered as it would be (rows, records). */
  readonly actions: readonly { readonly sink: string; readonly type: string; readonly writes: readonly unknown[]; readonly error?: string }[];
  readonly error?: { readonly message: string; readonly line?: number; readonly column?: number };
  readonly elapsed_ms: number;
}

export interface TraceRequest {
  readonly rule: string;
  /** How many messages to trace, 1..100. */
  readonly count: number;
}

export interface TraceStep {
  readonly step: 'received' | 'output' | 'rendered' | 'stored' | 'dead_lettered' | 'failed';
  readonly at: number;
  readonly sink?: string;
  readonly detail?: unknown;
}

export interface TracedMessage {
  readonly topic: string;
  readonly payload: string;
  readonly payload_encoding: 'text' | 'base64';
  readonly steps: readonly TraceStep[];
}

export interface TraceState {
  readonly rule?: string;
  readonly wanted: number;
  readonly messages: readonly TracedMessage[];
  readonly active: boolean;
}

export interface LetterSummaryView {
  readonly id: string;
  readonly at: number;
  readonly rule: string;
  readonly sink: string;
  readonly reason: string;
  readonly error: string;
  readonly topic: string;
  readonly replayed?: string;
}

export interface LetterList {
  readonly letters: readonly LetterSummaryView[];
  readonly total: number;
  readonly store: string;
}

export interface LetterDetail extends LetterSummaryView {
  readonly payload_text?: string;
  readonly payload_hex: string;
  readonly record?: unknown;
}

export interface LetterAction {
  readonly ids?: readonly string[];
  readonly filter?: { readonly rule?: string; readonly sink?: string; readonly reason?: string; readonly since?: number; readonly until?: number };
}

export interface LetterActionResult {
  readonly done: number;
  readonly failed: number;
  readonly detail: readonly { readonly id: string; readonly outcome: string }[];
}
