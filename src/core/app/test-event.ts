// A rule test's event (`tests: - event: {...}` in a rule file, or the console's Try it of a running
// rule) made the way `weir run` makes the event of a received message: the test's fields become a
// PUBLISH (topic, payload, QoS, flags, MQTT 5 properties, receive time), and core/ingest/event.ts's
// EventFactory reads it with weir.yaml's broker settings. So `publisher_clientid: {topic_level: 2}`
// gives a test the clientid the runtime would store, and a rule test shows what is stored.
import type { BrokerConfig } from '../../config/schema.js';
import { EventFactory } from '../ingest/event.js';
import type { InboundMessage } from '../ingest/message.js';
import { eventFromJson } from '../../rules/tools/eval-lines.js';
import type { RuleEvent } from '../../rules/index.js';

/** The publisher fields a subscriber is not told; a test may give them when the broker settings derive none. */
const GIVEN_ONLY = ['clientid', 'username', 'peerhost'] as const;

/** Makes a test's events with one broker configuration, as a running weir with it would. */
export function testEventMaker(broker: BrokerConfig, node: string): (fields: Record<string, unknown>) => RuleEvent {
  const factory = new EventFactory(broker, node);
  return (fields) => {
    const plain = eventFromJson(fields);
    const flags = (plain.flags ?? {}) as { retain?: boolean; dup?: boolean };
    const userProps = (plain.pub_props as Record<string, unknown> | undefined)?.['User-Property'];
    const msg: InboundMessage = {
      topic: plain.topic,
      payload: Buffer.from(plain.payload as string | Uint8Array),
      qos: plain.qos === 0 || plain.qos === 2 ? plain.qos : 1,
      retain: flags.retain === true,
      dup: flags.dup === true,
      properties: userProps && typeof userProps === 'object' ? { userProperties: userProps as Record<string, string> } : undefined,
      receivedAt: typeof plain.timestamp === 'number' ? plain.timestamp : Date.now(),
    };
    const event = factory.event(msg);
    const missing = GIVEN_ONLY.filter((k) => event[k] === undefined && typeof fields[k] === 'string');
    if (missing.length === 0) return event;
    // Fields the settings leave unset and the test gives: a copy of the documented fields with them.
    const copy: RuleEvent = {
      id: event.id,
      clientid: event.clientid,
      topic: event.topic,
      qos: event.qos,
      flags: event.flags,
      payload: event.payload,
      timestamp: event.timestamp,
      publish_received_at: event.publish_received_at,
      pub_props: event.pub_props,
      node: event.node,
      event: event.event,
    };
    for (const k of missing) copy[k] = fields[k] as string;
    return copy;
  };
}
