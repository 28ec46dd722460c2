// Message accessors: the same event fields as the variables, as functions (EMQX's IoT functions).
import { rawPayloadOf } from '../compile/context.js';
import { RuleEvalError } from '../errors.js';
import { getKey } from '../compile/paths.js';
import type { Scope } from '../compile/scope.js';
import { compileTopicFilter } from '../topic.js';
import { isBinary, isObj, text, typeError } from '../values/value-types.js';
import { def, type FunctionSpec } from './registry.js';

// biome-ignore lint/suspicious/noExplicitAny: each function checks its own arguments (args.ts); the registry holds them all.
const m = (sig: string, summary: string, fn: (s: Scope, ...a: any[]) => unknown, examples: FunctionSpec['examples'] = []): FunctionSpec[] =>
  def('message', sig, summary, fn, { scoped: true, examples });

/** `topic(n)`: the n-th level of the topic, 1-based. */
function topicLevel(s: Scope, n: unknown): unknown {
  if (n === undefined) return s.event.topic;
  if (!Number.isInteger(n)) throw typeError('topic', n);
  const levels = s.event.topic.split('/');
  const i = n as number;
  if (i < 1 || i > levels.length) throw new RuleEvalError('rule.bad_index', `topic(${i}): the topic has ${levels.length} levels`);
  return levels[i - 1];
}

/** `contains_topic(filters, topic[, qos])` over a list of `{topic, qos}` maps (a SUBSCRIBE's filters). */
function containsTopic(match: boolean) {
  return (_s: Scope, filters: unknown, topic: unknown, qos?: unknown): boolean => {
    if (!Array.isArray(filters) || !isBinary(topic)) return false;
    const t = text(topic);
    for (const f of filters) {
      if (!isObj(f) || !isBinary(f.topic)) continue;
      const ok = match ? compileTopicFilter(text(f.topic))(t) : text(f.topic) === t;
      if (ok) return qos === undefined || f.qos === qos;
    }
    return false;
  };
}

export const MESSAGE_FUNCTIONS: FunctionSpec[] = [
  ...m('msgid(): string', 'The message id (EMQX: id).', (s) => s.event.id, [{ call: 'msgid()', result: 'm1' }]),
  ...m('qos(): int', 'The QoS of the message.', (s) => s.event.qos, [{ call: 'qos()', result: 1 }]),
  ...m('flags(): map', 'The message flags (retain, dup).', (s) => s.event.flags ?? {}, [{ call: 'flags()', result: { retain: false, dup: false } }]),
  ...m('flag(string): bool', 'One message flag by name.', (s, name: unknown) => (isBinary(name) ? getKey(s.event.flags ?? {}, text(name)) : undefined), [
    { call: "flag('retain')", result: false },
  ]),
  ...m('topic(int?): string', 'The topic, or its n-th level (1-based).', topicLevel, [
    { call: 'topic()', result: 't/a/b' },
    { call: 'topic(2)', result: 'a' },
  ]),
  ...m('clientid(): string', 'The publisher client id (see docs/rules.md for how weir knows it).', (s) => s.event.clientid, [
    { call: 'clientid()', result: 'c1' },
  ]),
  ...m('username(): string', 'The publisher username.', (s) => s.event.username, [{ call: 'username()', result: 'u1' }]),
  ...m('peerhost(): string', 'The publisher IP address.', (s) => s.event.peerhost, [{ call: 'peerhost()', result: '10.0.0.1' }]),
  ...m('clientip(): string', 'Same as peerhost().', (s) => s.event.peerhost, [{ call: 'clientip()', result: '10.0.0.1' }]),
  ...m(
    'payload(string?): any',
    'The raw payload, or the value at a dotted path of the JSON payload.',
    (s, path?: unknown) => {
      if (path === undefined) return rawPayloadOf(s.ctx);
      if (!isBinary(path)) throw typeError('payload', path);
      let v: unknown = s.ctx.decodedPayload();
      for (const k of text(path).split('.')) v = getKey(v, k);
      return v;
    },
    [{ call: "payload('x')", result: 1 }],
  ),
  ...m('contains_topic(array, string, int?): bool', 'Whether a list of {topic, qos} filters contains this exact topic (and QoS).', containsTopic(false), [
    { call: "contains_topic([map_put('topic', 't/1', map_new())], 't/1')", result: true },
  ]),
  ...m(
    'contains_topic_match(array, string, int?): bool',
    'Whether a list of {topic, qos} filters has one that matches the topic (and QoS).',
    containsTopic(true),
    [{ call: "contains_topic_match([map_put('topic', 't/+', map_new())], 't/1')", result: true }],
  ),
];
