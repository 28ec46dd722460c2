// What the console's API reads of a running weir: the runtime's own parts, handed over as they
// are (no copies), so every figure the console shows is the one /metrics exports.
import type { WeirConfig } from '../../../config/types.js';
import type { Logger } from '../../../log.js';
import type { Metrics } from '../../../metrics/names.js';
import type { SchemaRegistry } from '../../../schemas/registry.js';
import type { BrokerConnections } from '../../ingest/connections.js';
import type { Pipeline } from '../../path/pipeline.js';
import type { SinkRunner } from '../../path/sink-runner.js';
import type { Tracer } from '../../path/trace.js';
import type { ReloadFailure } from '../rule-status.js';
import type { SequenceCheck } from './api.js';
import type { History } from './history.js';

export interface ConsoleDeps {
  readonly cfg: WeirConfig;
  readonly metrics: Metrics;
  readonly pipeline: Pipeline;
  readonly runners: ReadonlyMap<string, SinkRunner>;
  readonly connections: BrokerConnections;
  readonly tracer: Tracer;
  readonly history: History;
  readonly startedAt: number;
  readonly log: Logger;
  reloadFailure(): ReloadFailure | undefined;
  /** weir.yaml's schemas as the running rules have them (read again with each reload): Try it's SQL uses them too. */
  schemas(): SchemaRegistry;
  /**
   * Runs weir.yaml's `console.sequence` checks once (src/reconcile/, handed down by `weir run`: the
   * reconcile layer sits above the application); absent when none is configured.
   */
  readonly sequenceCheck?: () => Promise<SequenceCheck[]>;
}
