// The event a rule reads of a received PUBLISH (src/core/ingest/event.ts): the fields EMQX names, whether
// they are own data or getters (id, node, event, publish_received_at), as SQL, SELECT * and a
// sink's template read them; the clientid taken from a topic level as split('/') would give it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerConfig } from '../../src/config/schema.js';
import { EventFactory, topicLevel } from '../../src/core/ingest/event.js';
import type { InboundMessage } from '../../src/core/ingest/message.js';
import { EVENT_FIELDS } from '../../src/rules/compile/event-fields.js';
import { compileSql, compileTemplate, createMessageContext, type EvalResult } from '../../src/rules/index.js';

const broker = { publisher_clientid: { topic_level: 2 } } as BrokerConfig;

function message(topic: string, receivedAt = 1_733_140_000_123): InboundMessage {
  return { topic, payload: Buffer.from('{"t":1}'), qos: 1, retain: true, dup: false, properties: undefined, receivedAt };
}

function outputs(r: EvalResult | Promise<EvalResult>): Record<string, unknown>[] {
  assert.ok(!(r instanceof Promise) && r.matched);
  return r.outputs;
}

test('a topic level is what split("/") gives, undefined past the last level', () => {
  for (const [topic, level] of [
    ['device/17/telemetry', 2],
    ['device/17/telemetry', 1],
    ['device/17/telemetry', 3],
    ['device/17/telemetry', 4],
    ['device', 1],
    ['device', 2],
    ['a//b', 2],
    ['a//b', 3],
    ['/lead', 1],
    ['/lead', 2],
    ['trail/', 2],
    ['', 1],
  ] as const) {
    assert.equal(topicLevel(topic, level), topic.split('/')[level - 1], `${topic} level ${level}`);
  }
});

test('the event reads as EMQX fields: SQL, SELECT * and templates see id, node, event and publish_received_at', () => {
  const events = new EventFactory(broker, 'weir@host');
  const e = events.event(message('device/17/telemetry'));
  assert.equal(e.clientid, '17');
  assert.equal(e.topic, 'device/17/telemetry');
  assert.deepEqual(e.flags, { retain: true, dup: false });
  const sql = compileSql('SELECT id, clientid, node, event, timestamp, publish_received_at, qos FROM "device/#"');
  const [out] = outputs(sql.evaluate(createMessageContext(e), 'r'));
  assert.match(String(out!.id), /^[0-9a-f]{22}$/);
  assert.deepEqual(
    { ...out, id: undefined },
    {
      id: undefined,
      clientid: '17',
      node: 'weir@host',
      event: 'message.publish',
      timestamp: 1_733_140_000_123,
      publish_received_at: 1_733_140_000_123,
      qos: 1,
    },
  );
  const [all] = outputs(compileSql('SELECT * FROM "device/#"').evaluate(createMessageContext(e), 'r'));
  assert.equal(all!.id, out!.id);
  assert.equal(all!.node, 'weir@host');
  assert.equal(all!.event, 'message.publish');
  assert.equal(all!.publish_received_at, 1_733_140_000_123);
  assert.equal(compileTemplate('${id}')({}, e), out!.id, "a sink's template reads the id too");
  assert.equal(compileTemplate('${node}/${event}')({}, e), 'weir@host/message.publish');
});

test('ids are unique per message and the same each time one is read', () => {
  const a = new EventFactory(broker, 'n');
  const b = new EventFactory(broker, 'n');
  const ids = new Set<string>();
  const events = Array.from({ length: 1000 }, (_, i) => a.event(message(`device/${i}/telemetry`)));
  for (const e of events) ids.add(e.id!);
  for (let i = 0; i < 1000; i++) ids.add(b.event(message('device/1/telemetry')).id!);
  assert.equal(ids.size, 2000, 'no id repeats, within a factory or across two');
  for (const e of events.slice(0, 10)) assert.equal(e.id, e.id);
  assert.equal(events[0]!.id, [...ids][0]);
});

/** Every property name reachable on an object: its own and its prototypes', up to Object.prototype. */
function reachable(o: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = o; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Reflect.ownKeys(p)) if (typeof k === 'string') names.add(k);
  }
  names.delete('constructor');
  return [...names].sort();
}

test('an event exposes the documented fields and nothing else: no counter, cache or private field by any path', () => {
  const e = new EventFactory(broker, 'n').event(message('device/17/telemetry'));
  // EVENT_FIELDS less those this core leaves unset (username, peerhost) and metadata, the rule's.
  const documented = EVENT_FIELDS.filter((f) => !['username', 'peerhost', 'metadata'].includes(f));
  assert.deepEqual(reachable(e), [...documented].sort());
  // The same through each way a rule reads: a template, SQL, SELECT *.
  for (const name of ['seq', 'idPrefix', 'decoded', 'raw', 'constructor', '__proto__', 'toString']) {
    assert.equal(compileTemplate(`\${${name}}`)({}, e), undefined, `\${${name}}`);
    const [out] = outputs(compileSql(`SELECT ${name} AS v FROM "device/#"`).evaluate(createMessageContext(e), 'r'));
    assert.equal(out!.v, undefined, `SELECT ${name}`);
  }
  const [all] = outputs(compileSql('SELECT * FROM "device/#"').evaluate(createMessageContext(e), 'r'));
  assert.deepEqual(Object.keys(all!).sort(), [...documented, 'metadata'].sort());
});

test('a message context exposes its event and the two payload readers, nothing else', () => {
  const e = new EventFactory(broker, 'n').event(message('device/17/telemetry'));
  const ctx = createMessageContext(e);
  ctx.decodedPayload();
  assert.deepEqual(reachable(ctx), ['decodedPayload', 'event', 'rawPayload']);
});
