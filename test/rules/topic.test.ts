import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileJsonata, compileSql, createMessageContext, topicMatches, validateTopicFilter } from '../../src/rules/index.js';

test('topicMatches: exact, + and #', () => {
  const yes: [string, string][] = [
    ['a/b', 'a/b'],
    ['a/+', 'a/b'],
    ['a/+/c', 'a/x/c'],
    ['a/#', 'a'],
    ['a/#', 'a/b/c'],
    ['#', 'a/b'],
    ['+', ''],
    ['+/+', '/'],
    ['a/+', 'a/'],
    ['+/b', '/b'],
    ['$share/g/a/+', 'a/b'],
    ['$queue/a/#', 'a/b'],
    ['$SYS/#', '$SYS/x'],
    ['$SYS/+', '$SYS/x'],
  ];
  const no: [string, string][] = [
    ['a/b', 'a/c'],
    ['a/+', 'a'],
    ['a/+', 'a/b/c'],
    ['a/b', 'a/b/c'],
    ['#', '$SYS/x'],
    ['+/x', '$SYS/x'],
    ['a/#', 'b'],
    ['a/+/c', 'a/b/d'],
    ['a', 'a/'],
  ];
  for (const [f, t] of yes) assert.equal(topicMatches(f, t), true, `${f} should match ${t}`);
  for (const [f, t] of no) assert.equal(topicMatches(f, t), false, `${f} should not match ${t}`);
});

test('validateTopicFilter', () => {
  for (const ok of ['a', 'a/+/b', '#', 'a/#', '+', '$share/g/a/#', '/', 'a//b']) assert.equal(validateTopicFilter(ok), null, ok);
  for (const bad of ['', 'a/#/b', 'a#', 'a/b+', '$share/g', '$share//a', '$share/g+/a', 'a\u0000b']) {
    assert.equal(typeof validateTopicFilter(bad), 'string', bad);
  }
});

test('evaluate checks FROM; evaluateRouted (for a caller whose router matched the topic) does not, and is otherwise the same', async () => {
  const ctx = (topic: string) => createMessageContext({ topic, payload: '{"v":1}' });
  const sql = compileSql('SELECT payload.v AS v FROM "a/+", "$share/g/b/#"');
  const jsonata = compileJsonata('{"v": payload.v}', ['a/+', '$share/g/b/#']);
  for (const rule of [sql, jsonata]) {
    for (const topic of ['a/x', 'b', 'b/c/d']) {
      assert.deepEqual(await rule.evaluate(ctx(topic), 'r'), { matched: true, outputs: [{ v: 1 }] }, topic);
      assert.deepEqual(await rule.evaluateRouted(ctx(topic), 'r'), { matched: true, outputs: [{ v: 1 }] }, topic);
    }
    assert.deepEqual(await rule.evaluate(ctx('c/x'), 'r'), { matched: false });
    assert.deepEqual(await rule.evaluateRouted(ctx('c/x'), 'r'), { matched: true, outputs: [{ v: 1 }] }, 'no FROM check');
  }
});
