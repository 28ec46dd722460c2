// kafkajs errors → what the core does with them, in one place. kafkajs marks each error
// `retriable`, and wraps the last one in KafkaJSNumberOfRetriesExceeded when its own (short)
// retries run out: the cause decides. Protocol errors are classed by their Kafka error code
// (the `code` of KafkaJSProtocolError; names as in org.apache.kafka.common.protocol.Errors).
import { WeirError } from '../../errors.js';
import { NODE_TRANSIENT } from '../node-errors.js';
import type { ErrorClass } from '../types.js';

/** The record (or the batch, which the core then splits) can never be written as it is: dead-letter. */
const REJECT_CODES = new Map<number, string>([
  [2, 'CORRUPT_MESSAGE'], // the broker could not read the batch (e.g. a codec it cannot decode)
  [10, 'MESSAGE_TOO_LARGE'], // larger than the topic's max.message.bytes: splitting isolates it
  [17, 'INVALID_TOPIC_EXCEPTION'], // a rendered topic name the broker refuses
  [18, 'RECORD_LIST_TOO_LARGE'],
  [32, 'INVALID_TIMESTAMP'], // outside the topic's message.timestamp.*.ms window
  [87, 'INVALID_RECORD'], // e.g. a null key on a compacted topic
]);

/** An operator must act (auth, ACLs, missing topic, broker too old): report, retry slowly. */
const FATAL_CODES = new Map<number, string>([
  [3, 'UNKNOWN_TOPIC_OR_PARTITION'], // the topic does not exist and create_topics is off (or auto-creation is off)
  [21, 'INVALID_REQUIRED_ACKS'],
  [29, 'TOPIC_AUTHORIZATION_FAILED'],
  [31, 'CLUSTER_AUTHORIZATION_FAILED'],
  [33, 'UNSUPPORTED_SASL_MECHANISM'],
  [35, 'UNSUPPORTED_VERSION'],
  [36, 'TOPIC_ALREADY_EXISTS'], // only seen from CreateTopics with conflicting settings
  [37, 'INVALID_PARTITIONS'], // create_topics.partitions refused
  [38, 'INVALID_REPLICATION_FACTOR'], // create_topics.replication_factor larger than the cluster
  [40, 'INVALID_CONFIG'],
  [58, 'SASL_AUTHENTICATION_FAILED'],
  [76, 'UNSUPPORTED_COMPRESSION_TYPE'], // e.g. zstd on a broker older than 2.1
]);

/**
 * The idempotent producer's state no longer matches the broker's (its id expired, or a batch was
 * lost and sequence numbers skipped). Retrying helps once the producer is recreated with a new
 * id; the sink does that after every failed send (see sink.ts).
 */
export const PRODUCER_STATE_CODES = new Set<number>([
  45, // OUT_OF_ORDER_SEQUENCE_NUMBER
  46, // DUPLICATE_SEQUENCE_NUMBER
  47, // INVALID_PRODUCER_EPOCH
  59, // UNKNOWN_PRODUCER_ID
  67, // INVALID_PRODUCER_ID_MAPPING
]);

interface KafkaJsLike {
  name?: unknown;
  code?: unknown;
  type?: unknown;
  retriable?: unknown;
  cause?: unknown;
  originalError?: unknown;
  errors?: unknown;
}

/** The innermost error kafkajs wrapped (retries exceeded, non-retriable wrappers). */
export function rootCause(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 8; i++) {
    const k = e as KafkaJsLike | null;
    if (!k || typeof k !== 'object') break;
    const next = k.cause ?? k.originalError;
    if (!next || next === e) break;
    e = next;
  }
  return e;
}

/** The Kafka protocol error code of an error or its cause, if it has one. */
export function kafkaErrorCode(err: unknown): number | undefined {
  const e = rootCause(err) as KafkaJsLike | null;
  if (e && e.name === 'KafkaJSProtocolError' && typeof e.code === 'number') return e.code;
  if (e && typeof e.type === 'string' && typeof e.code === 'number') return e.code;
  return undefined;
}

export function classifyKafkaError(err: unknown): ErrorClass {
  // weir's own errors carry their class in the catalogue (src/error-codes.ts, ./errors.ts).
  if (err instanceof WeirError) return err.errorClass;
  // One send touching several brokers can fail on each: the worst class wins, so a batch with a
  // bad record is split even when another broker was merely down.
  const agg = err as KafkaJsLike | null;
  if (agg && Array.isArray(agg.errors) && agg.errors.length > 0) {
    const classes = agg.errors.map(classifyKafkaError);
    if (classes.includes('reject')) return 'reject';
    if (classes.includes('fatal')) return 'fatal';
    return 'retry';
  }
  const root = rootCause(err) as KafkaJsLike | null;
  const code = kafkaErrorCode(err);
  if (code !== undefined) {
    if (REJECT_CODES.has(code)) return 'reject';
    if (FATAL_CODES.has(code)) return 'fatal';
    // Producer state out of step with the broker: the sink has recreated its producer; try again.
    if (PRODUCER_STATE_CODES.has(code)) return 'retry';
    // Everything else kafkajs calls retriable is a leader move, a broker restarting, an ISR too
    // small for acks -1, a request timeout (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
    // NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, NETWORK_EXCEPTION, KAFKA_STORAGE_ERROR…): retry.
    // An unknown non-retriable code is treated as an operator's problem.
    return root?.retriable === false ? 'fatal' : 'retry';
  }
  const name = typeof root?.name === 'string' ? root.name : '';
  switch (name) {
    // Connection refused/closed/timed out, no broker reachable, metadata not loaded yet,
    // request timeout: the broker is down or restarting. This is what a stopped broker gives.
    case 'KafkaJSConnectionError':
    case 'KafkaJSConnectionClosedError':
    case 'KafkaJSRequestTimeoutError':
    case 'KafkaJSNoBrokerAvailableError':
    case 'KafkaJSBrokerNotFound':
    case 'KafkaJSMetadataNotLoaded':
    case 'KafkaJSTopicMetadataNotLoaded':
    case 'KafkaJSStaleTopicMetadataAssignment':
    case 'KafkaJSLockTimeout':
    case 'KafkaJSTimeout':
      return 'retry';
    // Credentials refused, or a broker that lacks an API kafkajs needs: an operator must act.
    case 'KafkaJSSASLAuthenticationError':
    case 'KafkaJSServerDoesNotSupportApiKey':
    case 'KafkaJSNotImplemented':
      return 'fatal';
    default:
      break;
  }
  if (typeof root?.code === 'string' && NODE_TRANSIENT.has(root.code)) return 'retry';
  // TLS problems (bad CA, expired or mismatched certificate) do not heal by themselves.
  if (
    typeof root?.code === 'string' &&
    /^(CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/.test(root.code)
  )
    return 'fatal';
  // Anything else: a bounded retry by the core (retry.max_attempts), then the dead-letter.
  return 'retry';
}
