// Sub-schemas every sink shares: how its items are batched, how many batches fly at once, and how
// failed writes are retried. The core implements them once (core/path/batcher.ts, core/path/sink-runner.ts,
// retry/); a sink's own spec.ts only declares its connection and action settings.
import { Type, type Static, type StringOptions } from '@sinclair/typebox';

export const BatchSpec = Type.Object(
  {
    max_items: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000, description: 'A batch is flushed when it holds this many items.' }),
    max_bytes: Type.Integer({ minimum: 1024, default: 4 * 1024 * 1024, description: 'A batch is flushed when its payloads add up to this many bytes.' }),
    max_delay_ms: Type.Integer({
      minimum: 0,
      maximum: 60_000,
      default: 20,
      description: 'A batch is flushed this long after its first item arrived, full or not.',
    }),
  },
  {
    additionalProperties: false,
    default: {},
    description: 'When items are written together. Actions writing to the same place (a table and its columns, a topic) share one batch.',
  },
);
export type BatchConfig = Static<typeof BatchSpec>;

export const RetrySpec = Type.Object(
  {
    initial_ms: Type.Integer({ minimum: 1, default: 200, description: 'First wait before a failed batch is written again.' }),
    max_ms: Type.Integer({ minimum: 1, default: 10_000, description: 'Longest wait between two attempts.' }),
    multiplier: Type.Number({ minimum: 1, default: 2, description: 'Each wait is the previous one times this, plus up to 20% jitter.' }),
    max_attempts: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        'Attempts before a batch that keeps failing transiently is dead-lettered; 0 = retry until it succeeds (the broker keeps the unacked messages meanwhile).',
    }),
  },
  { additionalProperties: false, default: {}, description: 'Backoff for transient write errors (connection lost, server restarting).' },
);
export type RetryConfig = Static<typeof RetrySpec>;

/** Keys every `sinks.<name>` entry has, beside those of its type's spec. */
export const SinkCommonSpec = {
  type: Type.String({ description: 'The sink type: postgres, kafka, pulsar, mqtt, http.', examples: ['postgres'] }),
  batch: BatchSpec,
  retry: RetrySpec,
  max_in_flight: Type.Integer({ minimum: 1, maximum: 256, default: 4, description: 'Batches of this sink being written at once (p-queue concurrency).' }),
};

/** The key every action has beside its sink type's own: which sink of weir.yaml it writes to. */
export const actionSinkKeySpec = (type: string) =>
  Type.String({ description: `Name of a sink of type ${type} in weir.yaml (its key under sinks:).`, examples: [`${type}_telemetry`] });

/**
 * Marks a string setting as a `${path}` template over the rule's output, so that the loader finds
 * every template of an action from its sink's spec alone (config/template-check.ts) and checks it
 * against the rule. A symbol, not a keyword: the published JSON Schema stays standard.
 */
export const TEMPLATE = Symbol.for('weir.template');

/** A string setting that is a `${path}` template (see TEMPLATE). */
export function TemplateString(options: StringOptions = {}) {
  return Type.String({ ...options, [TEMPLATE]: true });
}
