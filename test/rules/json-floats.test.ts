// parseJson: JSON.parse's values, except that a number written as a float with a whole value is
// a WholeFloat. Checked against JSON.parse itself on texts that take the slow reader.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainNumbers, WholeFloat } from '../../src/rules/values/floats.js';
import { parseJson } from '../../src/rules/values/json-floats.js';

const TEXTS = [
  '2.0',
  '-0.0',
  '1e3',
  '[1.0, 2, 3.50, -4.00e-0, 5E+1]',
  '{"t": 20.0, "s": "a\\"b\\\\c\\u00e9\\n", "n": null, "b": [true, false]}',
  '{"__proto__": 1.0, "constructor": {"x": 2.0}}',
  ' { "a" : [ { "b" : 1.0 } , [ ] , { } ] } ',
  '{"k": "1.0", "v": 1.25}',
  '{"deep": [[[[[[1.0]]]]]], "e": "", "u": "\\ud83d\\ude00", "big": 12345678901234567890.0}',
];

test("the values are JSON.parse's, whole-valued floats boxed", () => {
  for (const t of TEXTS) assert.deepStrictEqual(plainNumbers(parseJson(t)), JSON.parse(t), t);
});

test('floats written with a whole value are WholeFloats; integers and fractions stay numbers', () => {
  assert.deepStrictEqual(parseJson('{"a": 20.0, "b": 20, "c": 20.5, "d": 2e1, "e": "20.0"}'), {
    a: new WholeFloat(20),
    b: 20,
    c: 20.5,
    d: new WholeFloat(20),
    e: '20.0',
  });
  assert.deepStrictEqual(parseJson('2.0'), new WholeFloat(2));
  const o = parseJson('{"__proto__": 1.0}') as Record<string, unknown>;
  assert.ok(Object.hasOwn(o, '__proto__'));
  assert.equal(Object.getPrototypeOf(o), Object.prototype);
  assert.throws(() => parseJson('{"a": 1.0,}'), SyntaxError);
});
