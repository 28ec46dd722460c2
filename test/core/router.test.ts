import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TopicRouter } from '../../src/core/router.js';

test('exact, + and # filters, each value once, $share prefixes ignored', () => {
  const r = new TopicRouter<string>();
  r.add('device/+/telemetry', 'a');
  r.add('$share/g/device/+/telemetry', 'a');
  r.add('device/#', 'b');
  r.add('device/17/telemetry', 'c');
  r.add('#', 'd');
  assert.deepEqual([...r.match('device/17/telemetry')].sort(), ['a', 'b', 'c', 'd']);
  assert.deepEqual([...r.match('device/18/telemetry')].sort(), ['a', 'b', 'd']);
  assert.deepEqual([...r.match('device')].sort(), ['b', 'd'], "'#' matches its parent level");
  assert.deepEqual([...r.match('device/17/status/x')].sort(), ['b', 'd']);
  assert.deepEqual([...r.match('other')], ['d']);
});

test('topics starting with $ are not matched by leading wildcards', () => {
  const r = new TopicRouter<string>();
  r.add('#', 'all');
  r.add('+/x', 'plus');
  r.add('$SYS/#', 'sys');
  assert.deepEqual([...r.match('$SYS/x')], ['sys']);
  assert.deepEqual([...r.match('a/x')].sort(), ['all', 'plus']);
});

test('empty levels are levels', () => {
  const r = new TopicRouter<string>();
  r.add('a/+/b', 'x');
  assert.deepEqual([...r.match('a//b')], ['x']);
  assert.deepEqual([...r.match('a/b')], []);
});
