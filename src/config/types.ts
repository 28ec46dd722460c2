// What a loaded configuration is: weir.yaml and the rule files after validation, defaults and
// compilation (config/load.ts builds it). Types only, so what reads a configuration imports these
// and not the loader.
import type { ConfigError } from '../errors.js';
import type { CompiledRule } from '../rules/types.js';
import type { SinkType } from '../sinks/types.js';
import type { BatchConfig, RetryConfig } from './common-spec.js';
import type { SchemaEntry, SchemaRegistry } from '../schemas/registry.js';
import type { RuleFileConfig, WeirFileConfig } from './schema.js';

export interface SinkConfig {
  readonly name: string;
  /** The registered sink type (its `type` is the name written in weir.yaml). */
  readonly sinkType: SinkType;
  readonly batch: BatchConfig;
  readonly retry: RetryConfig;
  readonly max_in_flight: number;
  /** The type-specific settings, validated against the type's configSchema. */
  readonly settings: Record<string, unknown>;
}

export interface ActionConfig {
  readonly sink: string;
  /** Where a key of this action is written, for problems found later (`weir check --connect`): ['table'] → its line. */
  readonly lineOf: (path: ReadonlyArray<string | number>) => number;
  /** The sink-specific settings, validated against the type's actionSchema. */
  readonly settings: Record<string, unknown>;
}

export interface RuleConfig {
  readonly id: string;
  readonly file: string;
  readonly source: string;
  readonly sql?: string;
  readonly jsonata?: string;
  readonly compiled: CompiledRule;
  readonly payloadFormat: 'json' | 'raw';
  /** With payload_schema: undefined when the payload decodes (and validates), else why not. */
  readonly payloadCheck?: (payload: Buffer) => string | undefined;
  readonly payloadSchema?: string;
  readonly enabled: boolean;
  readonly actions: readonly ActionConfig[];
  readonly tests: RuleFileConfig['tests'];
  /** What `weir check` and `weir run` report without refusing the rule (config/template-check.ts). */
  readonly warnings: readonly ConfigError[];
}

export interface WeirConfig {
  readonly file: string;
  readonly broker: WeirFileConfig['broker'];
  /** Whether weir.yaml sets broker.client_id itself (read from the YAML, not the defaulted value). */
  readonly clientIdSet: boolean;
  readonly http: WeirFileConfig['http'];
  readonly console: WeirFileConfig['console'];
  readonly deadLetter: WeirFileConfig['dead_letter'];
  readonly logLevel: string;
  readonly logFormat: WeirFileConfig['log_format'];
  readonly migrateOnStart: boolean;
  readonly node: string;
  readonly rulesDir: string;
  /** weir.yaml's `schemas:` as written (reloaded with the rules), and the registry loaded from them. */
  readonly schemaEntries: Readonly<Record<string, SchemaEntry>>;
  readonly schemas: SchemaRegistry;
  readonly sinks: ReadonlyMap<string, SinkConfig>;
  readonly rules: readonly RuleConfig[];
}
