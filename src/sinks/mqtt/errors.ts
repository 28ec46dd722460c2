// The mqtt (republish) sink's error codes: what each means, its class (what weir does with it) and
// what the operator should do. The sinks' section of docs/errors.md is generated from these
// (src/sinks/error-catalogue.ts composes them with the core's); MqttError raises them and reads its
// class here.
import { type ErrorInfo, SINK_RETRIES_ACTION } from '../../error-codes.js';
import { sinkError } from '../../errors.js';

export const MQTT_CODES = {
  'sink.mqtt.aborted': {
    class: 'retry',
    meaning: 'a write abandoned at shutdown (the source message stays unacked)',
    action: 'nothing: the broker delivers it again',
  },
  'sink.mqtt.closed': { class: 'fatal', meaning: 'a write after close', action: 'a bug: report it' },
  'sink.mqtt.connection_lost': {
    class: 'retry',
    meaning: 'the connection to the broker dropped (or a PUBACK did not come within publish_timeout_ms) before every publish was acknowledged',
    action: 'check that the broker is up and reachable; weir retries meanwhile (the source messages stay unacked)',
  },
  'sink.mqtt.connect_refused': {
    class: 'fatal',
    meaning: 'the broker refused the connection (bad credentials, not authorized, client id refused)',
    action: "fix the sink's username/password/client_id or the broker's ACL; weir retries slowly meanwhile",
  },
  'sink.mqtt.encode': {
    class: 'reject',
    meaning: 'an output that cannot become a PUBLISH: an empty topic or one with + or #, a QoS that is not 0 or 1, a missing payload (dead-lettered)',
    action: "fix the rule's topic/qos/payload templates, then `weir dlq replay`",
  },
  'sink.mqtt.bad_topic': { class: 'fatal', meaning: 'a fixed `topic` that is not a legal topic name to publish to', action: "change the action's `topic`" },
  'sink.mqtt.refused': {
    class: 'reject',
    meaning:
      'the broker answered a QoS 1 PUBLISH with an MQTT 5 failure reason code (named in the dead letter: not authorized, topic name invalid, packet too large…)',
    action: "fix the topic, the payload or the broker's ACL, then `weir dlq replay`",
  },
  'sink.mqtt.busy': {
    class: 'retry',
    meaning: 'the broker answered a PUBLISH with quota exceeded or packet identifier in use (MQTT 5): a transient refusal',
    action: SINK_RETRIES_ACTION,
  },
} as const satisfies Record<string, ErrorInfo>;

export type MqttErrorCode = keyof typeof MQTT_CODES;

declare module '../../error-codes.js' {
  interface SinkErrorCodes extends Record<MqttErrorCode, true> {}
}

/** An error of the mqtt sink, with one of its codes. */
export class MqttError extends sinkError(MQTT_CODES) {}
