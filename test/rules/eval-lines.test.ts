// The `weir eval` JSON-lines contract: one output line per input line, ok:false for bad lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evalLine } from '../../src/rules/tools/eval-lines.js';

const line = (o: unknown): string => JSON.stringify(o);

test('a matching rule gives ok, matched and the outputs', async () => {
  const out = JSON.parse(
    await evalLine(
      line({ sql: 'SELECT payload.x AS x, clientid FROM "t/#" WHERE x > 1', event: { topic: 't/1', clientid: 'c', payload: '{"x":2}' }, rule_id: 'r' }),
    ),
  );
  assert.deepEqual(out, { ok: true, matched: true, outputs: [{ x: 2, clientid: 'c' }] });
});

test('no match gives matched false and no outputs; a missing field is still a field, shown as null', async () => {
  const out = JSON.parse(await evalLine(line({ sql: 'SELECT clientid FROM "t/#" WHERE qos = 1', event: { topic: 't/1' } })));
  assert.deepEqual(out, { ok: true, matched: false, outputs: [] });
  const out2 = JSON.parse(await evalLine(line({ sql: 'SELECT clientid, is_null(username) AS u FROM "t/#"', event: { topic: 't/1' } })));
  assert.deepEqual(out2, { ok: true, matched: true, outputs: [{ clientid: null, u: true }] });
});

test('parse and evaluation errors are ok:false lines', async () => {
  const a = JSON.parse(await evalLine(line({ sql: 'SELECT FROM', event: {} })));
  assert.equal(a.ok, false);
  assert.match(a.error, /expected/);
  const b = JSON.parse(await evalLine(line({ sql: 'SELECT payload.x + 1 AS y FROM "#"', event: { topic: 't', payload: '{}' } })));
  assert.equal(b.ok, false);
  for (const bad of ['', 'not json', '[]', '{"event": {}}', '{"sql": 1}', '{"sql": "SELECT * FROM \\"#\\"", "event": 5}']) {
    const r = JSON.parse(await evalLine(bad));
    assert.equal(r.ok, false, bad);
    assert.equal(typeof r.error, 'string');
  }
});

test('bytes that are not UTF-8 are written as {"$hex"}', async () => {
  const out = JSON.parse(await evalLine(line({ sql: "SELECT hexstr2bin('FF00') AS b, base64_decode('aGk=') AS t FROM \"#\"", event: { topic: 't' } })));
  assert.deepEqual(out.outputs, [{ b: { $hex: 'ff00' }, t: 'hi' }]);
  const raw = JSON.parse(await evalLine(line({ sql: 'SELECT payload FROM "#"', event: { topic: 't', payload: { $hex: 'c328' } } })));
  assert.deepEqual(raw.outputs, [{ payload: { $hex: 'c328' } }]);
});

test('JSONata rules through the same contract', async () => {
  const out = JSON.parse(await evalLine(line({ jsonata: '{"t": payload.temp * 2}', filters: ['s/#'], event: { topic: 's/1', payload: '{"temp":4}' } })));
  assert.deepEqual(out, { ok: true, matched: true, outputs: [{ t: 8 }] });
});

test('10,000 lines in one process, in order', async () => {
  const sql = 'SELECT payload.n AS n FROM "t/#" WHERE n mod 2 = 0';
  let matched = 0;
  for (let i = 0; i < 10_000; i++) {
    const out = JSON.parse(await evalLine(line({ sql, event: { topic: 't/x', payload: `{"n":${i}}` } })));
    assert.equal(out.ok, true);
    if (out.matched) {
      assert.equal(out.outputs[0].n, i);
      matched++;
    }
  }
  assert.equal(matched, 5_000);
});
