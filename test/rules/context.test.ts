// The payload is decoded at most once per message and shared by every rule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext } from '../../src/rules/index.js';
import { baseEvent } from './helpers.js';

test('one JSON.parse per message, whatever the number of rules and paths', () => {
  const rules = [
    compileSql('SELECT payload.x AS x, payload.a.b AS b FROM "t/#" WHERE payload.x = 1'),
    compileSql('SELECT payload.arr[1] AS f FROM "#"'),
    compileSql('FOREACH payload.arr DO item AS v FROM "#"'),
  ];
  const parse = JSON.parse;
  let calls = 0;
  JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    calls++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    const ctx = createMessageContext(baseEvent());
    for (const r of rules) assert.equal((r.evaluate(ctx, 'r') as { matched: boolean }).matched, true);
    assert.equal(calls, 1);
    assert.equal(ctx.decodedPayload(), ctx.decodedPayload());
  } finally {
    JSON.parse = parse;
  }
});

test('rules never change the shared decoded payload', () => {
  const ctx = createMessageContext(baseEvent());
  const before = JSON.stringify(ctx.decodedPayload());
  compileSql('SELECT 5 AS payload.x, 6 AS payload.a.b, payload AS p, 1 AS payload.arr[1] FROM "#"').evaluate(ctx, 'r');
  assert.equal(JSON.stringify(ctx.decodedPayload()), before);
});

test('a Buffer payload that is UTF-8 reads as text, other bytes stay bytes', () => {
  const text = compileSql('SELECT payload AS p, payload.x AS x FROM "#"').evaluate(createMessageContext(baseEvent({ payload: Buffer.from('{"x":2}') })), 'r');
  assert.deepEqual(text, { matched: true, outputs: [{ p: '{"x":2}', x: 2 }] });
  const bytes = compileSql('SELECT payload AS p, bytesize(payload) AS n FROM "#"').evaluate(
    createMessageContext(baseEvent({ payload: Buffer.from([0xff, 0x00]) })),
    'r',
  );
  assert.ok(!(bytes instanceof Promise), 'a SQL rule evaluates synchronously');
  assert.ok(bytes.matched && Buffer.isBuffer(bytes.outputs[0]?.p));
  assert.equal(bytes.matched && bytes.outputs[0]?.n, 2);
});
