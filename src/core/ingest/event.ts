// A received PUBLISH as the event EMQX's rule SQL reads: `id`, `clientid`, `topic`, `qos`, `flags`,
// `payload`, `timestamp`, `pub_props`, `node`. Rules never modify the event, so what every message
// shares (flag combinations, empty properties) is one frozen object.
//
// An event lives from its PUBLISH until its batch commits, and young-generation collections copy
// it (and then promote it) while it waits, so it holds as little as it can (docs/benchmarks.md,
// memory): what is the same for every event of a factory (`node`, `event`, the id's prefix) and
// what is derived (`publish_received_at`) are getters on a prototype, and `id` is made from the
// event's sequence number only when something reads it; few rules do, and making it for every
// message cost a string and the garbage of formatting it (about 200 bytes).
import { randomBytes } from 'node:crypto';
import type { BrokerConfig } from '../../config/schema.js';
import type { RuleEvent } from '../../rules/types.js';
import type { InboundMessage } from './message.js';

type Flags = Readonly<{ retain: boolean; dup: boolean }>;

export class EventFactory {
  private seq = 0;
  private readonly Event: new (
    seq: number,
    clientid: string | undefined,
    topic: string,
    qos: number,
    flags: Flags,
    payload: Buffer,
    timestamp: number,
    pub_props: Record<string, unknown>,
  ) => RuleEvent;

  constructor(
    private readonly broker: BrokerConfig,
    node: string,
  ) {
    this.Event = eventClass(node);
  }

  event(msg: InboundMessage): RuleEvent {
    const props = msg.properties;
    const userProps = props?.userProperties;
    const pc = this.broker.publisher_clientid;
    let clientid: string | undefined;
    if (pc.user_property && userProps) {
      const v = userProps[pc.user_property];
      clientid = Array.isArray(v) ? v[0] : v;
    }
    if (clientid === undefined && pc.topic_level) clientid = topicLevel(msg.topic, pc.topic_level);
    return new this.Event(
      this.seq++,
      clientid,
      msg.topic,
      msg.qos,
      FLAGS[msg.retain ? 1 : 0]![msg.dup ? 1 : 0]!,
      msg.payload,
      msg.receivedAt,
      props ? pubProps(props) : NO_PROPS,
    );
  }
}

/**
 * The event class of one factory: `node` and the id's prefix live on its prototype. A class
 * rather than an object literal, because an event lives until its message's outputs are stored:
 * V8 tracks the objects an object literal makes (its allocation site) and, once most of them
 * outlive a young-generation collection, allocates that literal in the old generation from then
 * on, where they die milliseconds later and only a full collection takes them back; `new` of a
 * class has no allocation site, so its objects stay young. The same holds for every object that
 * waits with its message (the sink's row, the ack slot). Measured in docs/benchmarks.md (100
 * rules, each message matching one). Ids are this factory's random prefix and the event's
 * sequence number: unique without a clock, and the same string each time an event's id is read.
 */
function eventClass(node: string) {
  const idPrefix = randomBytes(6).toString('hex');
  return class PublishEvent implements RuleEvent {
    // A # field, not a TypeScript `private` one: those are ordinary own properties at run time,
    // and templates once read this one as data (a rule's missing `seq` stored as this counter).
    // Only the documented fields may be reachable from a rule (test/core/event.test.ts lists them).
    readonly #seq: number;

    constructor(
      seq: number,
      readonly clientid: string | undefined,
      readonly topic: string,
      readonly qos: number,
      readonly flags: Flags,
      readonly payload: Buffer,
      readonly timestamp: number,
      readonly pub_props: Record<string, unknown>,
    ) {
      this.#seq = seq;
    }

    get id(): string {
      return `${idPrefix}${this.#seq.toString(16).padStart(10, '0')}`;
    }

    get publish_received_at(): number {
      return this.timestamp;
    }

    get node(): string {
      return node;
    }

    get event(): string {
      return 'message.publish';
    }
  };
}

/**
 * Level `level` (1-based) of a topic, as `topic.split('/')[level - 1]` gives it, without making
 * every level a string: undefined when the topic has fewer levels.
 */
export function topicLevel(topic: string, level: number): string | undefined {
  let start = 0;
  for (let i = 1; i < level; i++) {
    const slash = topic.indexOf('/', start);
    if (slash < 0) return undefined;
    start = slash + 1;
  }
  const end = topic.indexOf('/', start);
  return topic.slice(start, end < 0 ? topic.length : end);
}

/** The four flag combinations, shared by every message. */
const FLAGS = [false, true].map((retain) => [false, true].map((dup) => Object.freeze({ retain, dup })));

/** Shared by every message without properties. */
const NO_PROPS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** MQTT 5 publish properties under EMQX's names (`User-Property`, `Content-Type`…). */
function pubProps(p: NonNullable<InboundMessage['properties']>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.userProperties) out['User-Property'] = p.userProperties;
  if (p.contentType !== undefined) out['Content-Type'] = p.contentType;
  if (p.payloadFormatIndicator !== undefined) out['Payload-Format-Indicator'] = p.payloadFormatIndicator ? 1 : 0;
  if (p.messageExpiryInterval !== undefined) out['Message-Expiry-Interval'] = p.messageExpiryInterval;
  if (p.responseTopic !== undefined) out['Response-Topic'] = p.responseTopic;
  if (p.correlationData !== undefined) out['Correlation-Data'] = p.correlationData;
  return out;
}
