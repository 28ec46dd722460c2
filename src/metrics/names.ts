// Every metric weir exports, declared once, in EMQX's words. docs/metrics.md documents the same
// table; test/metrics-doc.test.ts keeps the two in step (names and labels).
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { sampledGauge, tallyCounter, tallyGauge } from './tally.js';

/**
 * Why a message became a dead letter: the values of weir_dead_letter_total's `reason` label. Each
 * is exported at 0 from the start, so that a dashboard's stat shows 0 rather than "No data" and an
 * alert on an increase sees the first letter (a series that appears at 1 has no increase to see).
 */
export const DEAD_LETTER_REASONS = [
  /** The payload is not JSON (or not what the rule's FROM decodes). */
  'invalid_payload',
  /** Larger than broker.max_payload_bytes. */
  'payload_too_large',
  /** The payload does not decode or validate with the rule's payload_schema. */
  'schema_invalid',
  /** The rule's SQL or JSONata threw on this message. */
  'rule_exception',
  /** The sink refused the item for good (a constraint, a type). */
  'rejected',
  /** The output could not be encoded for the sink (a schema, a template). */
  'encode_error',
  /** The sink's retry.max_attempts ran out. */
  'retries_exhausted',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

export function createMetrics(registry = new Registry()) {
  const c = (name: string, help: string, labelNames: string[]) => tallyCounter(registry, name, help, labelNames);
  const g = (name: string, help: string, labelNames: string[]) => tallyGauge(registry, name, help, labelNames);
  const deadLetters = c('weir_dead_letter_total', 'Dead letters stored, by reason.', ['reason']);
  for (const reason of DEAD_LETTER_REASONS) deadLetters.labels(reason);
  return {
    registry,
    // Ingest, per MQTT connection (label `connection` = its client id).
    ingestReceived: c('weir_ingest_received_total', 'PUBLISH packets received from the broker.', ['connection']),
    ingestAcked: c('weir_ingest_acked_total', 'QoS 1 messages PUBACKed to the broker.', ['connection']),
    ingestAbandoned: c('weir_ingest_abandoned_total', 'Unacked messages left behind when a connection dropped; the broker redelivers them.', ['connection']),
    ingestUnacked: g('weir_ingest_unacked', 'Messages received and not yet acked.', ['connection']),
    ingestHeld: sampledGauge(
      registry,
      'weir_ingest_held',
      'Messages received and not settled yet (outputs not all stored or dead-lettered): unacked, and QoS 0 / ack: on_receive ones still being stored.',
      ['connection'],
    ),
    ingestOldestUnackedAge: sampledGauge(
      registry,
      'weir_ingest_oldest_unacked_age_seconds',
      'Seconds the oldest message not yet acked has waited for its PUBACK; 0 when none.',
      ['connection'],
    ),
    ingestConnected: g('weir_ingest_connected', '1 while the connection is up.', ['connection']),
    ingestSessionTakenOver: c(
      'weir_ingest_session_taken_over_total',
      'Times another client with the same client id took the session (two processes sharing a broker.client_id); weir backs off.',
      ['connection'],
    ),
    ingestNoRule: c('weir_ingest_no_rule_total', 'Messages whose topic matched no enabled rule (acked, nothing to store).', []),
    // Rules (EMQX: matched = passed + failed; failed = failed.exception + failed.no_result).
    ruleMatched: c('weir_rule_matched_total', "Messages whose topic matched the rule's FROM.", ['rule']),
    rulePassed: c('weir_rule_passed_total', 'Messages for which the rule produced output.', ['rule']),
    ruleFailed: c('weir_rule_failed_total', 'Messages for which the rule produced no output (exception or no result).', ['rule']),
    ruleFailedException: c('weir_rule_failed_exception_total', 'Evaluation errors, including payloads that are not JSON (dead-lettered).', ['rule']),
    ruleFailedNoResult: c('weir_rule_failed_no_result_total', 'WHERE was false (or FOREACH produced nothing).', ['rule']),
    ruleActionsTotal: c('weir_rule_actions_total', 'Outputs handed to actions.', ['rule']),
    ruleActionsSuccess: c('weir_rule_actions_success_total', 'Outputs an action stored.', ['rule']),
    ruleActionsFailed: c('weir_rule_actions_failed_total', 'Outputs an action could not store (dead-lettered, or left unstored at shutdown).', ['rule']),
    // Actions and sinks (label `sink` = the name in weir.yaml, `rule` = the rule that fed it).
    sinkMatched: c('weir_sink_matched_total', 'Items handed to the sink.', ['sink', 'rule']),
    sinkSuccess: c('weir_sink_success_total', 'Items the sink stored durably.', ['sink', 'rule']),
    sinkFailed: c(
      'weir_sink_failed_total',
      'Items that ended neither stored nor dead-lettered (writes abandoned at shutdown; the broker redelivers their messages).',
      ['sink', 'rule'],
    ),
    sinkRetried: c('weir_sink_retried_total', 'Item write attempts repeated after a transient error.', ['sink', 'rule']),
    sinkDeadLettered: c('weir_sink_dead_lettered_total', 'Items the sink rejected, stored in the dead letter.', ['sink', 'rule']),
    sinkQueuing: g('weir_sink_queuing', 'Items waiting in a batch.', ['sink', 'rule']),
    sinkInflight: g('weir_sink_inflight', 'Items in batches being written.', ['sink', 'rule']),
    sinkUp: g('weir_sink_up', '1 while the last write or probe of the sink succeeded.', ['sink']),
    batchSize: new Histogram({
      name: 'weir_sink_batch_size',
      help: 'Items per written batch.',
      labelNames: ['sink'],
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
      registers: [registry],
    }),
    batchLatency: new Histogram({
      name: 'weir_sink_batch_latency_seconds',
      help: 'Time to write one batch.',
      labelNames: ['sink'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    // The fleet (src/core/fleet/): presence, the leave decision, adoption of orphaned sessions.
    fleetMembers: sampledGauge(registry, 'weir_fleet_members', 'Members of this share group as this replica sees them on the presence topics, by state.', [
      'state',
    ]),
    fleetLeave: c(
      'weir_fleet_leave_total',
      'Leave decisions at SIGTERM: drain (another member is live) or keep (the last one, or no answer from the broker).',
      ['decision'],
    ),
    sessionsAdopted: c('weir_sessions_adopted_total', 'Sessions of a gone or stopped member this replica adopted: stored their queue, then ended them.', []),
    sessionsAdoptionAbandoned: c(
      'weir_sessions_adoption_abandoned_total',
      'Adoptions given up: the owner came back (its session taken back), or this replica stopped; the session stays for its owner or the next adopter.',
      [],
    ),
    sessionsAdoptedMessages: c('weir_sessions_adopted_messages_total', 'Messages received through adopted sessions.', []),
    rulesReloadFailures: c(
      'weir_rules_reload_failures_total',
      'Rule reloads rejected (an invalid edit); the running rules stayed. /rules shows the last one.',
      [],
    ),
    sparkplugEdgeNodes: sampledGauge(
      registry,
      'weir_sparkplug_edge_nodes',
      'Sparkplug B edge nodes whose metric aliases (from their last NBIRTH/DBIRTH) this process holds.',
      [],
    ),
    sparkplugEdgeNodesEvicted: sampledGauge(
      registry,
      'weir_sparkplug_edge_nodes_evicted',
      'Sparkplug B edge nodes forgotten since start (the least recently seen, past the bound): their data carries bare aliases until their next birth.',
      [],
    ),
    deadLetters,
    deadLetterReduced: c('weir_dead_letter_reduced_total', 'Dead letters the store refused whole, stored again with the record as JSON text.', []),
    deadLetterFallback: c('weir_dead_letter_fallback_total', 'Dead letters the store refused even reduced, written to the local fallback file.', []),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The process's own metrics, for a running weir only (each call starts an event-loop monitor):
 * prom-client's defaults (CPU, resident memory, heap, event-loop lag, GC, handles) under weir's
 * prefix, so every series weir exports starts with `weir_` (`weir_process_resident_memory_bytes`,
 * `weir_nodejs_eventloop_lag_seconds`), and `weir_build_info` = 1 with the versions as labels.
 */
export function registerProcessMetrics(registry: Registry, version: string): void {
  collectDefaultMetrics({ register: registry, prefix: 'weir_' });
  new Gauge({ name: 'weir_build_info', help: "1, labelled with weir's version and Node's.", labelNames: ['version', 'node'], registers: [registry] })
    .labels(version, process.versions.node)
    .set(1);
}

/** One rule's counters, resolved once: `labels()` hashes its arguments on every call. */
export function ruleCounters(m: Metrics, rule: string) {
  return {
    matched: m.ruleMatched.labels(rule),
    passed: m.rulePassed.labels(rule),
    failed: m.ruleFailed.labels(rule),
    failedException: m.ruleFailedException.labels(rule),
    failedNoResult: m.ruleFailedNoResult.labels(rule),
    actionsTotal: m.ruleActionsTotal.labels(rule),
    actionsSuccess: m.ruleActionsSuccess.labels(rule),
    actionsFailed: m.ruleActionsFailed.labels(rule),
  };
}
export type RuleCounters = ReturnType<typeof ruleCounters>;

/** One action's (sink × rule) counters and gauges, resolved once. */
export function actionCounters(m: Metrics, { sink, rule }: { sink: string; rule: string }) {
  return {
    matched: m.sinkMatched.labels(sink, rule),
    success: m.sinkSuccess.labels(sink, rule),
    failed: m.sinkFailed.labels(sink, rule),
    retried: m.sinkRetried.labels(sink, rule),
    deadLettered: m.sinkDeadLettered.labels(sink, rule),
    queuing: m.sinkQueuing.labels(sink, rule),
    inflight: m.sinkInflight.labels(sink, rule),
  };
}
export type ActionCounters = ReturnType<typeof actionCounters>;
