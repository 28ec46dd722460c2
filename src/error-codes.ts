// Every error code weir raises on purpose, as data: what it means, what it makes weir do (its
// class) and what the operator should do. This file holds the core's codes; each sink declares
// its own in src/sinks/<type>/errors.ts, and src/sinks/error-catalogue.ts composes the two.
// WeirError takes its code from them (the type rejects a code that is not listed), its errorClass
// reads the class from them, and docs/errors.md is generated from the composed catalogue (`npm run
// errors-doc`; test/errors-doc.test.ts fails when the file is not what the generator writes), so
// the catalogue, the docs and the behaviour are one thing.

/**
 * What weir does with an error of this code.
 * - `retry`: transient; retried with the sink's backoff (or the command says to try again).
 * - `reject`: this one item (message, row, record) can never succeed; it is dead-lettered, the
 *   rest go on.
 * - `fatal`: an operator must act (a config, a schema, credentials). At start weir refuses to run;
 *   a sink holds its items and retries slowly until it is fixed.
 */
export type ErrorClass = 'retry' | 'reject' | 'fatal';

export interface ErrorInfo {
  readonly class: ErrorClass;
  /** When it is raised. */
  readonly meaning: string;
  /** What to do about it. */
  readonly action: string;
}

/** A section of the catalogue: a heading of docs/errors.md and its codes. */
export interface ErrorSection {
  readonly title: string;
  readonly codes: Readonly<Record<string, ErrorInfo>>;
}

/** The action of a sink's `retry` code that needs nothing from the operator: one wording for every sink. */
export const SINK_RETRIES_ACTION = 'nothing: weir retries until it goes through (the broker keeps the messages)';

const FIX_CONFIG = 'fix the file at the place named; `weir check` shows every problem at once';

export const CONFIG_CODES = {
  'config.invalid': { class: 'fatal', meaning: 'the configuration has errors; each is listed with file:line:col', action: FIX_CONFIG },
  'config.unreadable': {
    class: 'fatal',
    meaning: 'weir.yaml, a rule file, the rules directory or a file weir.yaml names (`http.tls`) cannot be read',
    action: 'check the path and the file permissions of the user weir runs as',
  },
  'config.yaml': { class: 'fatal', meaning: 'a YAML document could not be turned into values', action: FIX_CONFIG },
  'config.yaml_syntax': { class: 'fatal', meaning: 'YAML syntax error', action: FIX_CONFIG },
  'config.env_unset': {
    class: 'fatal',
    meaning: '`${NAME}` names an unset variable and gives no `:-default`',
    action: 'set the variable, or write `${NAME:-default}`',
  },
  'config.unknown_key': {
    class: 'fatal',
    meaning: 'a key the schema does not know (often a typo: the nearest allowed key is suggested)',
    action: 'use the suggested key, or remove it',
  },
  'config.invalid_value': { class: 'fatal', meaning: 'a value of the wrong type, out of range or not one of the allowed words', action: FIX_CONFIG },
  'config.unknown_sink_type': {
    class: 'fatal',
    meaning: '`type:` of a sink is not postgres, kafka, pulsar, mqtt or http',
    action: 'use one of the sink types listed',
  },
  'config.unknown_sink': {
    class: 'fatal',
    meaning: "a rule's action (or `dead_letter.sink`) names a sink weir.yaml does not have",
    action: 'name a sink under `sinks:`, or add it',
  },
  'config.invalid_url': {
    class: 'fatal',
    meaning: 'a URL (or host:port) that cannot work: not a URL, the wrong scheme, no host, a port out of range',
    action: 'write the URL the message suggests',
  },
  'config.sink.kafka': { class: 'fatal', meaning: 'settings of a Kafka sink that contradict each other', action: 'change one of the settings named' },
  'config.sink.pulsar': {
    class: 'fatal',
    meaning: 'settings of a Pulsar sink that need one another (`create_topic: if_missing` needs `admin_url`)',
    action: 'add the setting named',
  },
  'config.schema': {
    class: 'fatal',
    meaning: "a schema of `schemas:` does not load: its file is missing, or the schema's own parser refuses it (at its file:line where it says)",
    action: FIX_CONFIG,
  },
  'config.unknown_schema': {
    class: 'fatal',
    meaning: "a rule's payload_schema names no schema of weir.yaml's `schemas:`",
    action: 'name one of the schemas listed',
  },
  'config.sink.mqtt': {
    class: 'fatal',
    meaning: 'settings of an mqtt (republish) sink that contradict each other',
    action: 'change one of the settings named',
  },
  'config.sink.http': {
    class: 'fatal',
    meaning: 'settings of an http (webhook) sink that cannot work together',
    action: 'change one of the settings named',
  },
  'config.republish_loop': {
    class: 'fatal',
    meaning: "an mqtt action republishes into a topic that its rule's own FROM matches, on the broker weir reads from: each output would come back to the rule",
    action: 'publish elsewhere, or write `allow_loop: true` on the action when the loop is intended (its WHERE must stop it)',
  },
  'config.duplicate_rule': { class: 'fatal', meaning: 'two rule files use the same `id`', action: 'give one of them another id' },
  'config.rule_source': { class: 'fatal', meaning: 'a rule needs exactly one of `sql` or `jsonata` (and `from` with `jsonata`)', action: 'keep one of them' },
  'config.no_actions': {
    class: 'fatal',
    meaning: 'an enabled rule has no actions, so what it matches would be acknowledged and stored nowhere',
    action: 'add an action, or write `enabled: false` to keep the rule without running it',
  },
  'config.template_syntax': {
    class: 'fatal',
    meaning: 'a `${path}` template of an action has a `${` without its `}`, or an empty `${}`',
    action: 'close the placeholder; a literal `${` cannot be written in a template',
  },
  'config.template_name': {
    class: 'fatal',
    meaning:
      "a template names something the rule's SQL does not select and that is no event field, so it would always be missing (a warning for a JSONata rule)",
    action: 'select the name in the SQL (`AS name`), fix its spelling, or use an event field',
  },
  'config.topic_filter': { class: 'fatal', meaning: 'an invalid MQTT topic filter', action: '`+` and `#` stand alone between slashes, `#` only last' },
  'config.http_port_in_use': {
    class: 'fatal',
    meaning: 'another process already listens on `http.port` (where /metrics, /healthz and /readyz are served)',
    action: 'stop that process, or choose another port: `http.port` in weir.yaml, `--http-port` for `weir demo`',
  },
  'demo.unsupported_sink': {
    class: 'fatal',
    meaning: '`weir demo` embeds only a PostgreSQL-compatible database',
    action: 'run `weir run` against your own Kafka or Pulsar',
  },
  'demo.packages_missing': {
    class: 'fatal',
    meaning:
      '`weir demo` without its embedded broker and database (aedes, PGlite): development packages, which a production install (`npm ci --omit=dev`, the container image) leaves out',
    action: 'install them as the message says, or run `npm ci && npm run demo` in a clone',
  },
  'migrate.changed': { class: 'fatal', meaning: 'a migration file changed after it was applied', action: 'restore the file and add a new migration instead' },
  'migrate.failed': {
    class: 'fatal',
    meaning: "a migration's SQL, or applying the `hypertables` settings, failed; it was rolled back",
    action: "read the server's error in the message, fix the database or the migration, run `weir migrate` again",
  },
  'migrate.no_table': { class: 'fatal', meaning: '`hypertables.<table>` names a table that does not exist', action: 'create it in a migration first' },
  'migrate.time_column': {
    class: 'fatal',
    meaning: '`hypertables.<table>.time_column` differs from the column the hypertable is partitioned by, which cannot change in place',
    action: "set time_column to the hypertable's column, or migrate the data to a new table",
  },
} as const satisfies Record<string, ErrorInfo>;

export const DLQ_CODES = {
  'dlq.no_store': {
    class: 'fatal',
    meaning: 'weir.yaml names no dead-letter store `weir dlq` can read (and the default file does not exist), or `dead_letter.sink` is a sink that keeps none',
    action: 'point `dead_letter.sink` or `dead_letter.file` at the store `weir run` writes',
  },
  'dlq.not_migrated': {
    class: 'fatal',
    meaning: 'the dead-letter table lacks the replay columns of `migrations/004_dead_letter_replay.sql`',
    action: 'run `weir migrate`',
  },
  'dlq.replay_running': {
    class: 'retry',
    meaning:
      "another `weir dlq replay` holds the store's replay lock (PostgreSQL advisory lock, `<file>.replay-lock` with a live pid, or a lock record in a dead-letter topic renewed within 60 s)",
    action: 'wait for it to end, then replay again',
  },
  'dlq.read_timeout': {
    class: 'retry',
    meaning: "reading a Kafka dead-letter topic did not reach the topic's end within 60 s",
    action: 'check the cluster is reachable and the topic readable, then run the command again',
  },
  'dlq.file_busy': { class: 'retry', meaning: 'the dead-letter file kept growing while `purge` rewrote it', action: 'stop weir and purge again' },
} as const satisfies Record<string, ErrorInfo>;

const FIX_ARG = 'correct the option as the message says';

export const RECONCILE_CODES = {
  'reconcile.sequence_spec': { class: 'fatal', meaning: '`--sequence` is not TABLE:KEY:SEQ[:TIME] with a valid table name', action: FIX_ARG },
  'reconcile.no_sink': {
    class: 'fatal',
    meaning: '`--sink` names no sink, or one whose table `--sequence` cannot read, or weir.yaml has no such sink',
    action: 'name a sink of weir.yaml that stores rows in tables',
  },
  'reconcile.no_table': { class: 'fatal', meaning: 'the table `--sequence` names does not exist', action: FIX_ARG },
  'reconcile.no_column': { class: 'fatal', meaning: 'the table lacks a column `--sequence` names', action: FIX_ARG },
  'reconcile.no_time_column': { class: 'fatal', meaning: '`--since`/`--until` without a time column in `--sequence`', action: 'give it as TABLE:KEY:SEQ:TIME' },
  'reconcile.column_type': { class: 'fatal', meaning: 'the sequence column is not an integer type, or the time column not a date/time', action: FIX_ARG },
  'reconcile.bad_time': {
    class: 'fatal',
    meaning: '`--since`/`--until` is not a time PostgreSQL accepts, or `--since` is not before `--until`',
    action: 'write ISO 8601, e.g. 2024-12-04T10:00:00Z',
  },
} as const satisfies Record<string, ErrorInfo>;

const FIX_RULE = 'fix the rule at the line and column shown; `weir test` runs its examples';

export const RULE_LOAD_CODES = {
  'rule.invalid': { class: 'fatal', meaning: 'the rule could not be compiled (other cause)', action: FIX_RULE },
  'rule.unexpected_char': { class: 'fatal', meaning: 'a character the SQL lexer does not know', action: FIX_RULE },
  'rule.unterminated_string': { class: 'fatal', meaning: 'a quote that is never closed', action: FIX_RULE },
  'rule.expected_token': { class: 'fatal', meaning: 'the parser expected something else here (the message says what)', action: FIX_RULE },
  'rule.unknown_function': { class: 'fatal', meaning: 'no built-in function of that name', action: 'see docs/rules.md for the functions weir has' },
  'rule.unsupported_function': {
    class: 'fatal',
    meaning: 'an EMQX function weir does not offer, and why (docs/rule-functions.md)',
    action: 'use the alternative the message names',
  },
  'rule.arity': { class: 'fatal', meaning: 'wrong number of arguments for a function', action: FIX_RULE },
  'rule.bad_filter': { class: 'fatal', meaning: 'an invalid topic filter in FROM', action: FIX_RULE },
  'rule.foreach_star': { class: 'fatal', meaning: 'FOREACH needs an array expression, not `*`', action: FIX_RULE },
  'rule.too_deep': { class: 'fatal', meaning: 'the rule exceeds a limit of src/rules/limits.ts', action: 'split the expression' },
  'rule.too_long': { class: 'fatal', meaning: 'the rule exceeds a limit of src/rules/limits.ts', action: 'shorten the rule' },
  'rule.jsonata_syntax': { class: 'fatal', meaning: 'a JSONata expression does not parse', action: FIX_RULE },
} as const satisfies Record<string, ErrorInfo>;

const SEE_LETTER = 'the message is dead-lettered `rule_exception`: `weir dlq show` gives the payload; fix the rule or the device, then `weir dlq replay`';

export const RULE_EVAL_CODES = {
  'rule.eval_failed': { class: 'reject', meaning: 'evaluation failed (other cause)', action: SEE_LETTER },
  'rule.type_error': { class: 'reject', meaning: 'a function got an argument of the wrong type', action: SEE_LETTER },
  'rule.bad_argument': { class: 'reject', meaning: 'a function got an argument it cannot use', action: SEE_LETTER },
  'rule.bad_index': { class: 'reject', meaning: 'a position out of range', action: SEE_LETTER },
  'rule.bad_regex': {
    class: 'reject',
    meaning:
      'an invalid regular expression, or one that needs backtracking (backreferences, lookaround), which the linear-time engine refuses; reported when the rule is compiled if the pattern is a literal',
    action: 'rewrite the pattern without those features (docs/rules.md, "Regular expressions"); a message that met it is dead-lettered `rule_exception`',
  },
  'rule.arith_error': { class: 'reject', meaning: 'arithmetic overflow or division by zero', action: SEE_LETTER },
  'rule.payload_not_json': { class: 'reject', meaning: '`payload.x` on a payload that is not JSON', action: SEE_LETTER },
  'rule.limit': {
    class: 'reject',
    meaning:
      "an evaluation limit was reached: outputs, depth, sizes, a regular expression's work, or the evaluation budget (1 s, also JSONata's timeout and jq's, whose worker is then replaced)",
    action: SEE_LETTER,
  },
  'rule.jsonata_failed': { class: 'reject', meaning: 'a JSONata expression failed on this message', action: SEE_LETTER },
  'rule.jq_failed': {
    class: 'reject',
    meaning: 'a jq filter failed on this message (a jq error, a syntax error, input that is not JSON, or jq-web missing)',
    action: SEE_LETTER,
  },
  'rule.schema_error': {
    class: 'reject',
    meaning: 'a payload does not decode or validate with its schema (schema_decode, spb_decode, payload_schema), or a value does not encode',
    action: SEE_LETTER,
  },
  'rule.jsonata_result': { class: 'reject', meaning: 'a JSONata rule gave something other than an object or array of objects', action: SEE_LETTER },
} as const satisfies Record<string, ErrorInfo>;

/**
 * The core's sections of the catalogue, in the order of docs/errors.md. The full catalogue adds a
 * 'Sinks' section of every registered sink's codes (src/sinks/error-catalogue.ts).
 */
export const CORE_ERROR_SECTIONS: readonly ErrorSection[] = [
  { title: 'Configuration (`weir check`, `weir run` before starting)', codes: CONFIG_CODES },
  { title: 'Dead letters (`weir dlq`, exit 1)', codes: DLQ_CODES },
  { title: 'Reconcile (`weir reconcile`, exit 2)', codes: RECONCILE_CODES },
  { title: 'Rules: at load (the rule is rejected, with line and column)', codes: RULE_LOAD_CODES },
  { title: 'Rules: on one message (counted `failed_exception`, the message dead-lettered `rule_exception`)', codes: RULE_EVAL_CODES },
];

/**
 * The codes of the sinks, each declared in its own folder (src/sinks/<type>/errors.ts), which adds
 * its codes to this interface by declaration merging, so that a new sink edits no core file:
 * `declare module '../../error-codes.js' { interface SinkErrorCodes extends Record<PulsarErrorCode, true> {} }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each sink's errors.ts (declaration merging).
export interface SinkErrorCodes {}

/** A code of the core's sections. */
export type CoreErrorCode =
  | keyof typeof CONFIG_CODES
  | keyof typeof DLQ_CODES
  | keyof typeof RECONCILE_CODES
  | keyof typeof RULE_LOAD_CODES
  | keyof typeof RULE_EVAL_CODES;

/** Any code weir raises: the core's, and those the sinks declare. */
export type ErrorCode = CoreErrorCode | keyof SinkErrorCodes;

const CORE: ReadonlyMap<string, ErrorInfo> = new Map(CORE_ERROR_SECTIONS.flatMap((s) => Object.entries(s.codes)));

/** The core catalogue's entry of a code; undefined for a sink's code (its sink's errors.ts has it). */
export function coreErrorInfo(code: string): ErrorInfo | undefined {
  return CORE.get(code);
}
