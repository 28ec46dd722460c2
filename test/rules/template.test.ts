import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTemplate, templatePaths, templateRoots, templateSyntaxProblem } from '../../src/rules/index.js';
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

test('a name the rule selected is read from its output only: missing stays missing, never an event value', () => {
  const ev = { ...baseEvent(), seq: 7 } as ReturnType<typeof baseEvent>;
  // What SELECT payload.seq AS seq, payload.topic AS topic gives for a payload without them.
  const rec = { seq: undefined, topic: undefined, note: null };
  assert.equal(compileTemplate('${seq}')(rec, ev), undefined, 'not the event object`s own seq');
  assert.equal(compileTemplate('${topic}')(rec, ev), undefined, 'a selected topic that is missing is not the event topic');
  assert.equal(compileTemplate('${note}')(rec, ev), null);
  assert.equal(compileTemplate('s=${seq};t=${topic}')(rec, ev), 's=;t=');
  // SELECT payload.temp selects payload: its other keys are not read from the message.
  assert.equal(compileTemplate('${payload.a}')({ payload: { temp: 1 } }, ev), undefined);
});

test('a name the rule did not select falls back to the documented event fields and nothing else', () => {
  const ev = Object.assign(Object.create({ inherited: 'p' }), baseEvent(), { seq: 7, decoded: 'x', constructor: 'c' });
  for (const name of ['seq', 'decoded', 'raw', 'inherited', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'metadata']) {
    assert.equal(compileTemplate(`\${${name}}`)({}, ev), undefined, name);
  }
  assert.equal(compileTemplate('${topic}')({}, ev), 't/a/b');
});

test('templateSyntaxProblem finds an unterminated or empty placeholder; templateRoots names each root', () => {
  assert.equal(templateSyntaxProblem('${a} and ${b.c[1]}'), undefined);
  assert.equal(templateSyntaxProblem('plain } text'), undefined);
  assert.equal(templateSyntaxProblem('${sensr')?.at, 0);
  assert.equal(templateSyntaxProblem('x ${a ${b}')?.at, 2);
  assert.match(templateSyntaxProblem('${ }')?.message ?? '', /empty/);
  assert.deepEqual(templateRoots('${a.b}-${c} ${payload.x} ${[1]}'), ['a', 'c', 'payload']);
});
