// The console's bounded parts on their own: who gets payloads and writes (access.ts), the history
// rings (history.ts), the write window's quantiles (write-window.ts) and a trace's life (trace.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accessFor, isLoopback } from '../../src/core/app/console/access.js';
import { History, POINTS } from '../../src/core/app/console/history.js';
import { Tracer } from '../../src/core/path/trace.js';
import { WINDOW, WriteWindow } from '../../src/core/path/write-window.js';
import type { RuleEvent } from '../../src/rules/types.js';

test('payloads and writes: with credentials, a client CA, or on loopback only', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', '::ffff:127.0.0.1']) assert.equal(isLoopback(h), true, h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', 'weir.example', '128.0.0.1']) assert.equal(isLoopback(h), false, h);
  const open = { host: '0.0.0.0', port: 9464 };
  const anonymous = accessFor(open, true);
  assert.deepEqual([anonymous.payloads, anonymous.writes], [false, false]);
  assert.match(anonymous.reason, /http\.basic_auth.*127\.0\.0\.1/);
  assert.equal(accessFor({ ...open, basic_auth: { username: 'a', password: 'b' } }, true).writes, true);
  assert.equal(accessFor({ ...open, basic_auth: { username: 'a', password: 'b' } }, false).payloads, false);
  assert.equal(accessFor({ ...open, tls: { cert_file: 'c', key_file: 'k', client_ca_file: 'ca' } }, true).payloads, true);
  assert.equal(accessFor({ ...open, tls: { cert_file: 'c', key_file: 'k' } }, true).payloads, false);
  assert.equal(accessFor({ ...open, host: '127.0.0.1' }, true).writes, true);
});

test('history: rates per step from the totals, per rule too, bounded to POINTS', () => {
  let received = 0;
  let matched = 0;
  const h = new History({ messagesIn: () => received, rowsOut: () => received * 2, deadLetters: () => 0, ruleMatched: () => [['r', matched]] });
  const t0 = 1_000_000;
  h.sample(t0);
  assert.deepEqual(h.points(), [], 'the first sample is the baseline');
  received = 50;
  matched = 10;
  h.sample(t0 + 5000);
  const [p] = h.points();
  assert.equal(p!.t, t0 + 5000);
  assert.equal(p!.messages_in, 10);
  assert.equal(p!.rows_out, 20);
  assert.deepEqual(h.ruleSpark('r'), [2]);
  assert.deepEqual(h.ruleRate('r'), { now: 2, avg_5m: 2, max: 2 });
  for (let i = 2; i < POINTS + 20; i++) h.sample(t0 + i * 5000);
  assert.equal(h.points().length, POINTS, 'a fixed ring');
  assert.equal(h.ruleSpark('r').length, POINTS);
  assert.deepEqual(h.ruleRate('r'), { now: 0, avg_5m: 0, max: 2 }, 'max is the highest step seen');
  assert.ok(
    h.points().every((x, i, all) => i === 0 || x.t > all[i - 1]!.t),
    'oldest first',
  );
});

test('write window: nearest-rank quantiles over the last writes, the mean batch of the last 5 minutes', () => {
  const w = new WriteWindow();
  assert.deepEqual(w.latency(), { p50: 0, p99: 0 });
  const now = Date.now();
  for (let i = 1; i <= 100; i++) w.add(i, 10, now);
  assert.deepEqual(w.latency(), { p50: 50, p99: 99 });
  w.add(1000, 1000, now - 10 * 60_000);
  assert.equal(w.meanBatch(now), 10, 'a write older than 5 minutes is left out of the mean');
  for (let i = 0; i < WINDOW; i++) w.add(7, 1, now);
  assert.deepEqual(w.latency(), { p50: 7, p99: 7 }, 'only the last WINDOW writes count');
});

test('trace: nothing active until asked; the wanted messages followed to their end, then off by itself', () => {
  const tracer = new Tracer();
  assert.equal(tracer.active, undefined);
  const s = tracer.start('r', 2);
  const e1 = { topic: 'a/1', payload: Buffer.from('{"x":1}') } as RuleEvent;
  const e2 = { topic: 'a/2', payload: Buffer.from('{"x":2}') } as RuleEvent;
  const e3 = { topic: 'a/3', payload: Buffer.from('{"x":3}') } as RuleEvent;
  s.received('other', e1);
  assert.equal(s.messages.length, 0, "another rule's message is not taken");
  s.received('r', e1);
  s.received('r', e2);
  s.received('r', e3);
  assert.equal(s.messages.length, 2, 'no more than wanted');
  s.output('r', e1, { matched: true, outputs: [{ x: 1 }] }, 1);
  s.rendered('r', e1, 'db', () => ({ x: 1 }));
  s.finished('r', e1, 'stored', 'db');
  assert.equal(tracer.active, s, 'still on: message 2 has not ended');
  s.output('r', e2, { matched: false }, 1);
  assert.equal(tracer.active, undefined, 'off once every traced message ended');
  assert.equal(tracer.last, s);
  assert.deepEqual(
    s.messages[0]!.steps.map((x) => x.step),
    ['received', 'output', 'rendered', 'stored'],
  );
  assert.deepEqual(
    s.messages[1]!.steps.map((x) => x.step),
    ['received', 'output'],
  );
  const again = tracer.start('r', 1);
  again.received('r', e3);
  again.finished('r', e3, 'dead_lettered', undefined, { reason: 'rule_exception' });
  assert.equal(tracer.active, undefined, "a rule's failure ends the message");
});
