// Pieces compiled from the same text are shared between rules (src/rules/compile/shared-closures.ts); a
// rule whose own aliases change what a name reads must still get pieces of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext, type RuleEvent } from '../../src/rules/index.js';
import { sharedKey } from '../../src/rules/compile/shared-closures.js';
import { compileTemplate } from '../../src/rules/compile/template.js';

const event = (payload: unknown): RuleEvent => ({ topic: 't/1', clientid: 'c1', payload: JSON.stringify(payload) });
const outputs = (sql: string, payload: unknown) => {
  const r = compileSql(sql).evaluate(createMessageContext(event(payload)), 'r');
  return 'outputs' in r ? r.outputs : r;
};

test('the same field text in two rules is one closure; each rule still gives its own outputs', () => {
  const a = 'SELECT payload.temp AS temp, clientid AS device FROM "t/+"';
  const b = 'SELECT payload.temp AS temp, payload.hum AS h FROM "t/#"';
  assert.deepEqual(outputs(a, { temp: 21.5, hum: 40 }), [{ temp: 21.5, device: 'c1' }]);
  assert.deepEqual(outputs(b, { temp: 22, hum: 41 }), [{ temp: 22, h: 41 }]);
  assert.equal(compileTemplate('${temp}'), compileTemplate('${temp}'));
  assert.notEqual(compileTemplate('${temp}'), compileTemplate('${hum}'));
  assert.notEqual(sharedKey(compileTemplate('${temp}')), undefined);
});

test('a name an alias writes is read from the rule, not from a closure another rule shares', () => {
  // Both read `payload.x`; in the second, `payload` is first replaced by an alias.
  const plain = 'SELECT payload.x AS x FROM "t/+"';
  const aliased = 'SELECT \'{"x": 7}\' AS payload, payload.x AS x FROM "t/+"';
  assert.deepEqual(outputs(plain, { x: 1 }), [{ x: 1 }]);
  assert.deepEqual(outputs(aliased, { x: 1 }), [{ payload: '{"x": 7}', x: 7 }]);
  assert.deepEqual(outputs(plain, { x: 2 }), [{ x: 2 }]);
  // An alias read later (`AS t` then `t + 1`) writes back into the rule's slot: not shared.
  assert.deepEqual(outputs('SELECT payload.x AS t, t + 1 AS u FROM "t/+"', { x: 1 }), [{ t: 1, u: 2 }]);
  assert.deepEqual(outputs('SELECT payload.x AS t FROM "t/+"', { x: 5 }), [{ t: 5 }]);
});
