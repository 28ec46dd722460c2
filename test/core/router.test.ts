import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TopicRouter } from '../../src/core/path/router.js';
import { compileSql } from '../../src/rules/index.js';
import { compileTopicFilter } from '../../src/rules/topic.js';

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

test('topics matching the same filters share one result array: nothing is built or kept per topic', () => {
  const r = new TopicRouter<string>();
  r.add('device/+/telemetry', 'a');
  r.add('device/+/telemetry', 'b');
  const first = r.match('device/0/telemetry');
  assert.deepEqual(first, ['a', 'b']);
  for (let d = 1; d < 100_000; d++) assert.equal(r.match(`device/${d}/telemetry`), first);
});

test('an add after lookups is seen by the next lookup, and leaves the arrays already handed out as they were', () => {
  const r = new TopicRouter<string>();
  r.add('device/+/telemetry', 'a');
  const before = r.match('device/1/telemetry');
  r.add('device/+/telemetry', 'b');
  r.add('device/1/#', 'c');
  assert.deepEqual(before, ['a']);
  assert.deepEqual([...r.match('device/1/telemetry')].sort(), ['a', 'b', 'c']);
  assert.deepEqual(r.match('device/2/telemetry'), ['a', 'b']);
});

test('a level with one exact child matches that level only, not a prefix or an extension of it', () => {
  const r = new TopicRouter<string>();
  r.add('device/+/telemetry', 'a');
  for (const t of ['device/1/telemetr', 'device/1/telemetryx', 'devic/1/telemetry', 'devicex/1/telemetry', 'device/1/telemetry/', 'device/1'])
    assert.deepEqual(r.match(t), [], t);
  r.add('device/+/status', 'b');
  assert.deepEqual(r.match('device/1/status'), ['b']);
  assert.deepEqual(r.match('device/1/telemetry'), ['a']);
});

test("the router matches exactly what each rule's own FROM matcher matches (so the pipeline skips that re-check)", () => {
  // Every filter shape MQTT allows, with share prefixes, against topics that sit on each edge.
  const filters = [
    '#',
    '+',
    '+/+',
    '+/#',
    'a',
    'a/b',
    'a/+',
    'a/#',
    'a/+/c',
    'a/+/#',
    '+/b/c',
    'a//c',
    'a/+/',
    '/a',
    '/+',
    '/#',
    '$SYS/#',
    '$SYS/+',
    '$SYS/a',
    '+/a/#',
    'device/+/telemetry',
    'device/+/telemetry7',
    '$share/g/a/+',
    '$share/g/#',
    '$share/g/$SYS/#',
    '$queue/a/#',
    '$queue/+/b',
    '$share/grp/device/+/telemetry7',
  ];
  const topics = [
    'a',
    'b',
    'a/b',
    'a/c',
    'a/b/c',
    'a/b/c/d',
    'a//c',
    'a/',
    '/a',
    '/',
    '//',
    'a/b/',
    'x/b/c',
    'x/a/y',
    '$SYS',
    '$SYS/a',
    '$SYS/a/b',
    '$other/a',
    'device/17/telemetry',
    'device/17/telemetry7',
    'device/17/telemetry70',
    'device//telemetry7',
  ];
  const router = new TopicRouter<string>();
  for (const f of filters) router.add(f, f);
  for (const t of topics) {
    const routed = new Set(router.match(t));
    for (const f of filters) assert.equal(routed.has(f), compileTopicFilter(f)(t), `filter ${f}, topic ${t}`);
  }
});

test('a rule with several FROM filters is routed once for a topic two of them match, and for each one alone', () => {
  const rule = compileSql('SELECT payload FROM "a/+", "$share/g/a/#", "b/c"');
  const router = new TopicRouter<object>();
  for (const f of rule.filters) router.add(f, rule);
  assert.deepEqual(router.match('a/b'), [rule]);
  assert.deepEqual(router.match('a/b/c'), [rule]);
  assert.deepEqual(router.match('b/c'), [rule]);
  assert.deepEqual(router.match('b/d'), []);
});
