// weir.yaml + rules/*.yaml → one validated, frozen configuration, or every error found (each with
// file:line:col). Nothing here connects to anything: `weir check` and `weir run` share this code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { ConfigError, WeirError, errorText } from '../errors.js';
import { redactUrl } from '../log.js';
import { checkSql, compileJsonata, compileSql, FUNCTIONS, validateTopicFilter, type CompiledSqlRule } from '../rules/index.js';
import { schemaFunctions } from '../rules/functions/schema.js';
import type { FunctionRegistry } from '../rules/functions/registry.js';
import { SchemaRegistry, type SchemaEntry } from '../schemas/registry.js';
import { SparkplugAliases } from '../schemas/sparkplug-aliases.js';
import type { CompiledRule } from '../rules/types.js';
import { sinkType, sinkTypeNames } from '../sinks/registry.js';
import { brokerUrlProblem } from './broker-url.js';
import { SinkCommonSpec, type BatchConfig, type RetryConfig } from './common-spec.js';
import { didYouMean } from './did-you-mean.js';
import { httpTlsProblems, resolveHttpTls } from './http-tls.js';
import { ruleErrorAt } from './rule-error-at.js';
import { checkTemplates, type RuleOutput } from './template-check.js';
import { BrokerSpec, RuleFileSpec, SchemaSpec, WeirSpec, type BrokerConfig, type RuleFileConfig, type WeirFileConfig } from './schema.js';
import { validatePart } from './validate.js';
import { interpolateEnv, locate, locateKey, parseYaml, type YamlSource } from './yaml-source.js';
import type { ActionConfig, RuleConfig, SinkConfig, WeirConfig } from './types.js';

/** Every problem found in a configuration, reported together. */
export class ConfigErrors extends WeirError {
  readonly errors: readonly ConfigError[];
  constructor(errors: ConfigError[]) {
    super('config.invalid', errors.map((e) => e.message).join('\n'));
    this.errors = errors;
  }
}

function readSource(file: string, errors: ConfigError[]): YamlSource | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    errors.push(new ConfigError('config.unreadable', `cannot read: ${errorText(err)}`, { file }));
    return undefined;
  }
  const src = parseYaml(file, text);
  // One mistake in YAML syntax throws the parser off for what follows: its first error is the
  // mistake, the rest are echoes of it (and the schema errors of a misread document would be too).
  if (src.errors.length) {
    errors.push(src.errors[0]!);
    return undefined;
  }
  return src;
}

/**
 * Loads weir.yaml (with `${ENV}` interpolation) and the rule files of its rules_dir. With
 * `ruleErrors`, the rule files' errors go there instead of failing the load, and the config holds
 * the rules that loaded: for a command that needs only weir.yaml's sinks and dead-letter settings
 * (`weir dlq list`), which must work while a rule file is broken.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env, rulesDirOverride?: string, ruleErrors?: ConfigError[]): WeirConfig {
  const errors: ConfigError[] = [];
  const path = resolve(file);
  const src = readSource(path, errors);
  if (!src) throw new ConfigErrors(errors);
  interpolateEnv(src, env);
  const top = validatePart<WeirFileConfig>(WeirSpec, src.doc.toJS(), src, []);
  // readSource returned src only without syntax errors: src.errors now holds interpolation's.
  errors.push(...src.errors, ...top.errors);
  const cfg = top.value;
  if (cfg.broker && !top.errors.some((e) => e.path === 'broker.url')) {
    const problem = brokerUrlProblem(cfg.broker.url);
    if (problem)
      errors.push(
        new ConfigError('config.invalid_url', problem, { file: path, ...locate(src, ['broker', 'url']), path: 'broker.url', value: redactUrl(cfg.broker.url) }),
      );
  }
  // http.tls paths are relative to weir.yaml; the files are checked here, for check and run alike.
  const tlsValid = cfg.http?.tls && !top.errors.some((e) => e.path.startsWith('http.tls'));
  const http = tlsValid ? { ...cfg.http, tls: resolveHttpTls(cfg.http.tls!, path) } : cfg.http;
  if (tlsValid) errors.push(...httpTlsProblems(http.tls!, src));

  const sinks = new Map<string, SinkConfig>();
  for (const [name, raw] of Object.entries(cfg.sinks ?? {})) {
    const sc = loadSink(name, raw as Record<string, unknown>, src, errors);
    if (sc) sinks.set(name, sc);
  }
  // A name that has its own error already: a sink whose type is unknown, or any sink when the
  // `sinks:` key itself is misspelled. Rules naming it are not reported again for that mistake.
  const sinksMisspelled = top.errors.some((e) => e.code === 'config.unknown_key' && !e.path.includes('.') && didYouMean(e.path, ['sinks']) === 'sinks');
  const reported = (name: string) => sinksMisspelled || Object.hasOwn(cfg.sinks ?? {}, name);
  if (cfg.dead_letter?.sink !== undefined && !sinks.has(cfg.dead_letter.sink) && !reported(cfg.dead_letter.sink)) {
    errors.push(
      new ConfigError('config.unknown_sink', `no sink named '${cfg.dead_letter.sink}' (sinks: ${[...sinks.keys()].join(', ') || 'none'})`, {
        file: path,
        ...locate(src, ['dead_letter', 'sink']),
        path: 'dead_letter.sink',
      }),
    );
  }
  const letterSink = cfg.dead_letter?.sink === undefined ? undefined : sinks.get(cfg.dead_letter.sink);
  if (letterSink && !letterSink.sinkType.keepsLetters?.(letterSink.settings)) {
    const message = `sink '${letterSink.name}' (type ${letterSink.sinkType.type}) keeps no dead letters with its settings (docs/operations.md, dead letters); name one that does, or write dead_letter: { file: <path> }`;
    errors.push(new ConfigError('config.invalid_value', message, { file: path, ...locate(src, ['dead_letter', 'sink']), path: 'dead_letter.sink' }));
  }
  if (cfg.broker && cfg.broker.share_group === '' && cfg.broker.connections > 1) {
    errors.push(
      new ConfigError('config.invalid_value', 'without a share_group every connection would get every message: use connections: 1', {
        file: path,
        ...locate(src, ['broker', 'connections']),
        path: 'broker.connections',
      }),
    );
  }

  const schemaEntries = (cfg.schemas ?? {}) as Record<string, SchemaEntry>;
  const schemas = loadSchemas(schemaEntries, path, new SparkplugAliases(), errors, src);

  const rulesDir = resolve(dirname(path), rulesDirOverride ?? cfg.rules_dir ?? './rules');
  if (ruleErrors && errors.length) throw new ConfigErrors(inReadingOrder(errors));
  const rules = loadRules(rulesDir, sinks, ruleErrors ?? errors, { reported, schemas, broker: cfg.broker });
  if (ruleErrors) ruleErrors.splice(0, ruleErrors.length, ...inReadingOrder(ruleErrors));
  if (errors.length) throw new ConfigErrors(inReadingOrder(errors));
  return Object.freeze({
    file: path,
    broker: cfg.broker,
    clientIdSet: src.doc.hasIn(['broker', 'client_id']),
    http,
    console: cfg.console,
    deadLetter: cfg.dead_letter,
    logLevel: cfg.log_level,
    logFormat: cfg.log_format,
    migrateOnStart: cfg.migrate_on_start,
    node: cfg.node,
    rulesDir,
    schemaEntries,
    schemas,
    sinks,
    rules,
  });
}

/**
 * Loads weir.yaml's `schemas:` (files relative to weir.yaml). A schema that does not load is an
 * error at its own file:line when its parser gives one, else at its entry in weir.yaml (`src`;
 * on a rule reload weir.yaml is not read again, and the error names the schema file). The
 * Sparkplug alias state is passed in so that a reload keeps it.
 */
export function loadSchemas(
  entries: Readonly<Record<string, SchemaEntry>>,
  weirFile: string,
  aliases: SparkplugAliases,
  errors: ConfigError[],
  src?: YamlSource,
): SchemaRegistry {
  const { registry, problems } = SchemaRegistry.load(entries, dirname(weirFile), aliases);
  for (const p of problems) {
    const message = `schema '${p.name}': ${p.message}`;
    const key = ['schemas', p.name, p.key ?? 'file'];
    if (p.line !== undefined) errors.push(new ConfigError('config.schema', message, { file: p.file, line: p.line, col: 1 }));
    else if (src) errors.push(new ConfigError('config.schema', message, { file: weirFile, ...locate(src, key), path: key.join('.') }));
    else errors.push(new ConfigError('config.schema', message, { file: p.file }));
  }
  return registry;
}

const boundFunctions = new WeakMap<SchemaRegistry, FunctionRegistry>();

/** The function registry whose schema functions use `schemas`. */
export function functionsWith(schemas: SchemaRegistry | undefined): FunctionRegistry {
  if (schemas === undefined) return FUNCTIONS;
  let f = boundFunctions.get(schemas);
  if (f === undefined) {
    f = FUNCTIONS.with(schemaFunctions(schemas));
    boundFunctions.set(schemas, f);
  }
  return f;
}

/**
 * The broker and node settings of weir.yaml alone, for a command that makes events as `weir run`
 * does but needs no sink (`weir test`): an unset variable elsewhere in the file is not its concern.
 */
export function readEventSettings(file: string, env: NodeJS.ProcessEnv = process.env): { broker: BrokerConfig; node: string } {
  const errors: ConfigError[] = [];
  const src = readSource(resolve(file), errors);
  if (!src) throw new ConfigErrors(errors);
  interpolateEnv(src, env);
  const doc = (src.doc.toJS() ?? {}) as Record<string, unknown>;
  const broker = validatePart<BrokerConfig>(BrokerSpec, doc.broker, src, ['broker']);
  // An unset variable leaves its value empty; where that breaks a broker setting, the schema says so.
  if (broker.errors.length) throw new ConfigErrors(broker.errors);
  return { broker: broker.value, node: typeof doc.node === 'string' ? doc.node : 'weir@localhost' };
}

/**
 * The schemas of weir.yaml alone, for a command that evaluates rules but needs no sink (`weir eval
 * -c`, `weir test`); without a file, a registry with none (Sparkplug B still decodes).
 */
export function readSchemaSettings(file: string | undefined, env: NodeJS.ProcessEnv = process.env): SchemaRegistry {
  if (file === undefined) return SchemaRegistry.load({}, process.cwd(), new SparkplugAliases()).registry;
  const errors: ConfigError[] = [];
  const path = resolve(file);
  const src = readSource(path, errors);
  if (!src) throw new ConfigErrors(errors);
  interpolateEnv(src, env);
  const doc = (src.doc.toJS() ?? {}) as Record<string, unknown>;
  const entries = validatePart<Record<string, SchemaEntry>>(Type.Record(Type.String(), SchemaSpec), doc.schemas ?? {}, src, ['schemas']);
  errors.push(...entries.errors);
  const registry = loadSchemas(entries.errors.length ? {} : entries.value, path, new SparkplugAliases(), errors, src);
  if (errors.length) throw new ConfigErrors(inReadingOrder(errors));
  return registry;
}

function loadSink(name: string, raw: Record<string, unknown>, src: YamlSource, errors: ConfigError[]): SinkConfig | undefined {
  const type = sinkType(String(raw.type));
  if (!type) {
    errors.push(
      new ConfigError('config.unknown_sink_type', `unknown sink type '${String(raw.type)}' (known: ${sinkTypeNames().join(', ')})`, {
        file: src.file,
        ...locate(src, ['sinks', name, 'type']),
        path: `sinks.${name}.type`,
      }),
    );
    return undefined;
  }
  const schema = Type.Composite([Type.Object(SinkCommonSpec), type.configSchema as never], { additionalProperties: false });
  const { value, errors: errs } = validatePart<Record<string, unknown>>(schema, raw, src, ['sinks', name]);
  errors.push(...errs);
  const { type: _t, batch, retry, max_in_flight, ...settings } = value;
  // The type's own checks (URLs, settings that contradict each other) need settings of the right shape.
  for (const p of errs.length ? [] : (type.lint?.(settings) ?? [])) {
    const at = ['sinks', name, ...p.path];
    errors.push(
      new ConfigError(p.code ?? 'config.invalid_value', p.message, {
        file: src.file,
        ...locate(src, at),
        path: at.join('.'),
        value: p.value === undefined ? undefined : redactUrl(p.value),
      }),
    );
  }
  return { name, sinkType: type, batch: batch as BatchConfig, retry: retry as RetryConfig, max_in_flight: max_in_flight as number, settings };
}

/** What rule files are read against, beside the sinks. */
export interface RuleContext {
  /** A sink missing from `sinks` whose own error weir.yaml already has: actions naming it are not reported a second time. */
  readonly reported?: (sink: string) => boolean;
  /** weir.yaml's schemas, for the schema functions and payload_schema. */
  readonly schemas?: SchemaRegistry;
  /** The broker weir reads from, for the sinks' action checks (a republish loop). */
  readonly broker?: BrokerConfig;
}

/** Loads every *.yaml / *.yml in `dir` as a rule file. */
export function loadRules(dir: string, sinks: ReadonlyMap<string, SinkConfig>, errors: ConfigError[], ctx: RuleContext = {}): RuleConfig[] {
  let files: string[];
  try {
    files = ruleFilesIn(dir);
  } catch (err) {
    errors.push(new ConfigError('config.unreadable', `cannot read the rules directory: ${errorText(err)}`, { file: dir }));
    return [];
  }
  const rules: RuleConfig[] = [];
  const ids = new Map<string, string>();
  for (const file of files) {
    const rule = loadRuleFile(file, sinks, errors, ctx);
    if (!rule) continue;
    const dup = ids.get(rule.id);
    if (dup) {
      errors.push(new ConfigError('config.duplicate_rule', `rule id '${rule.id}' is also used by ${dup}`, { file, line: 1, col: 1, path: 'id' }));
      continue;
    }
    ids.set(rule.id, file);
    rules.push(rule);
  }
  return rules;
}

/**
 * The *.yaml / *.yml files of a rules directory and of its subfolders (a fleet's rules kept in a
 * folder per site load as they look), in path order; folders whose name starts with a dot are
 * skipped (an editor's or git's).
 */
export function ruleFilesIn(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    const isDir = entry.isDirectory() || (entry.isSymbolicLink() && statSync(path).isDirectory());
    if (isDir) out.push(...ruleFilesIn(path));
    else if (/\.ya?ml$/.test(entry.name) && statSync(path).isFile()) out.push(path);
  }
  return out;
}

/** One rule file → a compiled rule, or errors pushed to `errors`. `sinks` resolves action types. */
export function loadRuleFile(file: string, sinks: ReadonlyMap<string, SinkConfig>, errors: ConfigError[], ctx: RuleContext = {}): RuleConfig | undefined {
  const { reported, schemas, broker } = ctx;
  const before = errors.length;
  const src = readSource(file, errors);
  if (!src) return undefined;
  const { value: r, errors: errs } = validatePart<RuleFileConfig>(RuleFileSpec, src.doc.toJS(), src, []);
  errors.push(...errs);
  if (errs.length) return undefined;
  if ((r.sql === undefined) === (r.jsonata === undefined)) {
    errors.push(new ConfigError('config.rule_source', 'a rule needs exactly one of `sql` or `jsonata`', { file, line: 1, col: 1 }));
    return undefined;
  }
  if (r.jsonata !== undefined && !r.from) {
    errors.push(
      new ConfigError('config.rule_source', 'a jsonata rule needs `from:` (its topic filters)', { file, ...locate(src, ['jsonata']), path: 'jsonata' }),
    );
    return undefined;
  }
  for (const [i, f] of (r.from ?? []).entries()) {
    const why = validateTopicFilter(f);
    if (why) errors.push(new ConfigError('config.topic_filter', why, { file, ...locate(src, ['from', i]), path: `from.${i}` }));
  }
  let compiled: CompiledRule | undefined;
  try {
    compiled = r.sql !== undefined ? compileSql(r.sql, functionsWith(schemas)) : compileJsonata(r.jsonata!, r.from!);
  } catch (err) {
    // The compiler stops at the first problem; the recovering check finds every one of them.
    const all = r.sql !== undefined ? checkSql(r.sql, functionsWith(schemas)) : [];
    for (const e of all.length ? all : [err]) errors.push(ruleErrorAt(src, r.sql !== undefined ? 'sql' : 'jsonata', e));
  }
  let payloadCheck: ((payload: Buffer) => string | undefined) | undefined;
  if (r.payload_schema !== undefined) {
    const name = r.payload_schema;
    if (schemas?.has(name) && !schemas.checkable(name))
      errors.push(
        new ConfigError('config.unknown_schema', `schema '${name}' has no message_type: payload_schema decodes with it (set it in weir.yaml's schemas:)`, {
          file,
          ...locate(src, ['payload_schema']),
          path: 'payload_schema',
        }),
      );
    else if (schemas?.has(name)) payloadCheck = (payload) => schemas.check(name, payload);
    else
      errors.push(
        new ConfigError('config.unknown_schema', `no schema named '${name}' in weir.yaml (schemas: ${schemas?.names().join(', ') || 'none'})`, {
          file,
          ...locate(src, ['payload_schema']),
          path: 'payload_schema',
        }),
      );
  }
  if ((r.actions ?? []).length === 0 && r.enabled) {
    errors.push(
      new ConfigError(
        'config.no_actions',
        'a rule needs at least one action: without one its messages would be acknowledged and stored nowhere (write enabled: false to keep a rule that does not run)',
        { file, ...locate(src, src.doc.has('actions') ? ['actions'] : ['id']), path: 'actions' },
      ),
    );
  }
  const actions: ActionConfig[] = [];
  const warnings: ConfigError[] = [];
  let failed = false;
  for (const [i, raw] of (r.actions ?? []).entries()) {
    const a = raw as Record<string, unknown>;
    const sink = sinks.get(String(a.sink));
    if (!sink) {
      if (reported?.(String(a.sink))) {
        failed = true;
        continue;
      }
      errors.push(
        new ConfigError('config.unknown_sink', `no sink named '${String(a.sink)}' in weir.yaml (sinks: ${[...sinks.keys()].join(', ') || 'none'})`, {
          file,
          ...locate(src, ['actions', i, 'sink']),
          path: `actions.${i}.sink`,
        }),
      );
      continue;
    }
    const schema = Type.Composite([Type.Object({ sink: Type.String() }), sink.sinkType.actionSchema as never], { additionalProperties: false });
    const { value, errors: aerrs } = validatePart<Record<string, unknown>>(schema as TSchema, a, src, ['actions', i]);
    errors.push(...aerrs);
    const { sink: _s, ...settings } = value;
    actions.push({ sink: sink.name, settings, lineOf: (path) => locateKey(src, ['actions', i, ...path]).line });
    if (compiled && aerrs.length === 0) {
      const output: RuleOutput =
        r.sql !== undefined ? { kind: 'sql', names: (compiled as CompiledSqlRule).outputNames } : { kind: 'jsonata', expression: r.jsonata ?? '' };
      checkTemplates(sink.sinkType.actionSchema, settings, output, { src, action: i }, errors, warnings);
      for (const p of sink.sinkType.lintAction?.(settings, { filters: compiled.filters, sink: sink.settings, broker }) ?? []) {
        const at = ['actions', i, ...p.path];
        errors.push(new ConfigError(p.code ?? 'config.invalid_value', p.message, { file, ...locate(src, at), path: at.join('.'), value: p.value }));
      }
    }
  }
  if (errors.length > before || !compiled || failed) return undefined;
  return {
    id: r.id,
    file,
    source: r.sql ?? r.jsonata!,
    sql: r.sql,
    jsonata: r.jsonata,
    compiled,
    payloadFormat: r.payload_format,
    payloadCheck,
    payloadSchema: r.payload_schema,
    enabled: r.enabled,
    actions,
    tests: r.tests,
    warnings,
  };
}

/**
 * The errors as a reader goes through the files: each file's in line order. And one error per
 * mistake: an unset environment variable empties its value, and the schema's complaint about the
 * empty value at the same place would only repeat it.
 */
function inReadingOrder(errors: ConfigError[]): ConfigError[] {
  const unset = new Set(errors.filter((e) => e.code === 'config.env_unset').map((e) => `${e.file}:${e.line}:${e.col}`));
  const files = [...new Set(errors.map((e) => e.file))];
  return errors
    .filter((e) => e.code === 'config.env_unset' || !unset.has(`${e.file}:${e.line}:${e.col}`))
    .sort((a, b) => files.indexOf(a.file) - files.indexOf(b.file) || a.line - b.line || a.col - b.col);
}
