import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Batcher } from '../../src/core/path/batcher.js';

test('flushes at max_items, at max_bytes, and after max_delay_ms', async () => {
  const out: number[][] = [];
  const b = new Batcher<number>({ max_items: 3, max_bytes: 100, max_delay_ms: 30 }, (x) => out.push(x));
  b.add(1, 1);
  b.add(2, 1);
  b.add(3, 1);
  assert.deepEqual(out, [[1, 2, 3]]);
  b.add(4, 60);
  b.add(5, 60);
  assert.deepEqual(
    out,
    [
      [1, 2, 3],
      [4, 5],
    ],
    'bytes reached',
  );
  b.add(6, 1);
  assert.equal(out.length, 2);
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(out[2], [6], 'time reached');
  b.flushNow();
  assert.equal(out.length, 3, 'an empty flush hands on nothing');
});
