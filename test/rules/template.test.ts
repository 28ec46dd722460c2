import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTemplate, templatePaths } from '../../src/rules/index.js';
import { baseEvent } from './helpers.js';

test('a lone placeholder returns the raw value, type kept', () => {
  const rec = { n: 1.5, o: { a: [1, 2] }, s: 'x', b: false, z: null };
  assert.equal(compileTemplate('${n}')(rec), 1.5);
  assert.deepEqual(compileTemplate('${o}')(rec), { a: [1, 2] });
  assert.equal(compileTemplate('${o.a[2]}')(rec), 2);
  assert.equal(compileTemplate('${b}')(rec), false);
  assert.equal(compileTemplate('${z}')(rec), null);
  assert.equal(compileTemplate('${missing}')(rec), undefined);
  assert.equal(compileTemplate(' ${ s } ')(rec), ' x ');
});

test('mixed text renders values, objects as JSON, missing as empty', () => {
  const rec = { n: 2, o: { a: 1 }, s: 'x' };
  assert.equal(compileTemplate('v=${n};o=${o};m=${missing};s=${s}')(rec), 'v=2;o={"a":1};m=;s=x');
  assert.equal(compileTemplate('plain')(rec), 'plain');
});

test('paths fall back to the event, payload paths decode the payload', () => {
  const ev = baseEvent();
  assert.equal(compileTemplate('${clientid}')({}, ev), 'c1');
  assert.equal(compileTemplate('${topic}')({}, ev), 't/a/b');
  assert.equal(compileTemplate('${timestamp}')({}, ev), 1700000000000);
  assert.equal(compileTemplate('${payload.a.b}')({}, ev), 2);
  assert.equal(compileTemplate('${clientid}')({ clientid: 'mine' }, ev), 'mine');
  assert.equal(compileTemplate('${payload.x}')({ payload: '{"x":9}' }, ev), 9, 'a JSON string in the record is walked into');
  assert.equal(compileTemplate('t/${clientid}/${payload.x}')({}, ev), 't/c1/1');
});

test('templatePaths lists the placeholders', () => {
  assert.deepEqual(templatePaths('${a.b}-${c} ${payload.x}'), ['a.b', 'c', 'payload.x']);
});
