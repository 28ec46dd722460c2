// Shared fixtures for the rule engine tests.
import type { RuleEvent } from '../../src/rules/index.js';

export const PAYLOAD = {
  x: 1,
  f: 1.5,
  t: true,
  n: null,
  a: { b: 2 },
  arr: [1, 2, 3],
  s: '{"k":5}',
  from: 'f',
  sensors: [
    { idx: 0, name: 't0' },
    { idx: 1, name: 't1' },
    { idx: 2, name: 't2' },
  ],
};

export function baseEvent(over: Partial<Record<keyof RuleEvent, unknown>> = {}): RuleEvent {
  return {
    id: 'm1',
    clientid: 'c1',
    username: 'u1',
    topic: 't/a/b',
    qos: 1,
    flags: { retain: false, dup: false },
    payload: JSON.stringify(PAYLOAD),
    peerhost: '10.0.0.1',
    timestamp: 1700000000000,
    publish_received_at: 1700000000000,
    pub_props: { 'User-Property': { k: 'v' } },
    node: 'weir@host',
    event: 'message.publish',
    ...over,
  } as RuleEvent;
}
