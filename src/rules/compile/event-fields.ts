// The event fields a rule can read (EMQX 5 `message.publish`), how each is read from the
// RuleEvent, and the snapshot of all of them that `SELECT *` and an empty FOREACH DO output.
import { rawPayloadOf } from './context.js';
import { RuleEvalError } from '../errors.js';
import { defineKey } from './paths.js';
import type { Scope } from './scope.js';
import type { Obj } from '../values/value-types.js';

export type Ev = (s: Scope) => unknown;

/** The fields, in the order `SELECT *` outputs them. */
export const EVENT_FIELDS = [
  'id',
  'clientid',
  'username',
  'payload',
  'peerhost',
  'topic',
  'qos',
  'flags',
  'pub_props',
  'timestamp',
  'publish_received_at',
  'node',
  'event',
  'metadata',
] as const;

const readers: Record<string, Ev> = {
  id: (s) => s.event.id,
  clientid: (s) => s.event.clientid,
  username: (s) => s.event.username,
  payload: (s) => rawPayloadOf(s.ctx),
  peerhost: (s) => s.event.peerhost,
  topic: (s) => s.event.topic,
  qos: (s) => s.event.qos,
  flags: (s) => s.event.flags,
  pub_props: (s) => s.event.pub_props,
  timestamp: (s) => s.event.timestamp,
  publish_received_at: (s) => s.event.publish_received_at,
  node: (s) => s.event.node,
  event: (s) => s.event.event,
  metadata: (s) => ({ rule_id: s.ruleId }),
};

const undef: Ev = () => undefined;

/** The decoded payload; a payload that is not JSON fails the evaluation, as in EMQX. */
export function decodedPayload(s: Scope): unknown {
  const v = s.ctx.decodedPayload();
  if (v === undefined) {
    throw new RuleEvalError('rule.payload_not_json', 'the payload is not valid JSON, so payload.<path> cannot be read');
  }
  return v;
}

/**
 * Reader of a variable from the event. `payload` followed by a path reads the decoded payload;
 * a name that is no event field is undefined (EMQX does not fail on unknown names).
 */
export function eventReader(name: string, withPath: boolean): Ev {
  if (name === 'payload' && withPath) return decodedPayload;
  return Object.hasOwn(readers, name) ? (readers[name] as Ev) : undef;
}

export function isEventField(name: string): boolean {
  return Object.hasOwn(readers, name);
}

/** Every event field that has a value, plus the values written by aliases (slot overrides). */
export function inputSnapshot(s: Scope, slotNames: readonly string[]): Obj {
  // Unrolled in EVENT_FIELDS order: SELECT * runs this per message.
  const e = s.event;
  const out: Obj = {};
  if (e.id !== undefined) out.id = e.id;
  if (e.clientid !== undefined) out.clientid = e.clientid;
  if (e.username !== undefined) out.username = e.username;
  out.payload = rawPayloadOf(s.ctx);
  if (e.peerhost !== undefined) out.peerhost = e.peerhost;
  if (e.topic !== undefined) out.topic = e.topic;
  if (e.qos !== undefined) out.qos = e.qos;
  if (e.flags !== undefined) out.flags = e.flags;
  if (e.pub_props !== undefined) out.pub_props = e.pub_props;
  if (e.timestamp !== undefined) out.timestamp = e.timestamp;
  if (e.publish_received_at !== undefined) out.publish_received_at = e.publish_received_at;
  if (e.node !== undefined) out.node = e.node;
  if (e.event !== undefined) out.event = e.event;
  out.metadata = { rule_id: s.ruleId };
  for (let i = 0; i < slotNames.length; i++) {
    const v = s.slots[i];
    if (v !== undefined) defineKey(out, slotNames[i] as string, v);
  }
  return out;
}
