// The Kafka sink's error codes: what each means, its class (what weir does with it) and what the
// operator should do. The sinks' section of docs/errors.md is generated from these
// (src/sinks/error-catalogue.ts composes them with the core's); KafkaError raises them and reads its
// class here.
import type { ErrorInfo } from '../../error-codes.js';
import { sinkError } from '../../errors.js';

export const KAFKA_CODES = {
  'sink.kafka.aborted': {
    class: 'retry',
    meaning: 'a write abandoned at shutdown (the message stays unacked)',
    action: 'nothing: the broker delivers it again',
  },
  'sink.kafka.bad_topic': { class: 'fatal', meaning: 'a topic name Kafka does not accept', action: "change the action's `topic`" },
  'sink.kafka.closed': { class: 'fatal', meaning: 'a write after close', action: 'a bug: report it' },
  'sink.kafka.encode': {
    class: 'reject',
    meaning: 'an output that cannot be encoded as a Kafka record (dead-lettered)',
    action: "fix the rule's key/value/headers, then `weir dlq replay`",
  },
  'sink.kafka.no_brokers': { class: 'retry', meaning: 'the cluster metadata lists no brokers', action: 'check the Kafka cluster; weir retries meanwhile' },
} as const satisfies Record<string, ErrorInfo>;

export type KafkaErrorCode = keyof typeof KAFKA_CODES;

declare module '../../error-codes.js' {
  interface SinkErrorCodes extends Record<KafkaErrorCode, true> {}
}

/** An error of the Kafka sink, with one of its codes. */
export class KafkaError extends sinkError(KAFKA_CODES) {}
