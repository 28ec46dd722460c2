// The page's pure helpers (console/src/), in Node: user properties as the Try it form reads them,
// the hex dump of a dead letter, the dead-letter list's query, and how counters and rates read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { count, duration, hexDump, rate } from '../../console/src/format.js';
import { letterQuery } from '../../console/src/letter-filter.js';
import { parseProperties } from '../../console/src/user-properties.js';

test('user properties: name=value lines, the value kept as typed, a line without = named', () => {
  assert.deepEqual(parseProperties('unit=°C\n\n region = eu-west=1\n'), { unit: '°C', region: ' eu-west=1' });
  assert.deepEqual(parseProperties(''), {});
  assert.throws(() => parseProperties('a=1\nnoequals'), /user properties, line 2: write name=value/);
  assert.throws(() => parseProperties('=value'), /line 1/);
});

test('hex dump: 16 bytes a line with their offset', () => {
  const hex = Buffer.from('{"seq":0,"temp":75.5}').toString('hex');
  assert.equal(hexDump(hex), '0000  7b 22 73 65 71 22 3a 30 2c 22 74 65 6d 70 22 3a\n0010  37 35 2e 35 7d');
  assert.equal(hexDump(''), '');
});

test("the dead-letter list's query: only the fields set, times as epoch milliseconds", () => {
  const empty = { rule: '', sink: '', reason: '', since: '', until: '', limit: 100 };
  assert.equal(letterQuery(empty), 'limit=100');
  const q = new URLSearchParams(letterQuery({ ...empty, rule: 'r 1', reason: 'rejected', since: '2026-12-05T10:00' }));
  assert.equal(q.get('rule'), 'r 1');
  assert.equal(q.get('reason'), 'rejected');
  assert.equal(q.get('since'), String(new Date('2026-12-05T10:00').getTime()));
  assert.equal(q.get('sink'), null);
});

test('counters whole with separators, rates with one decimal under 100, durations in words', () => {
  assert.equal(count(1234567), '1,234,567');
  assert.equal(rate(0), '0');
  assert.equal(rate(12.345), '12.3');
  assert.equal(rate(1234.5), '1,235');
  assert.equal(duration(42_000), '42 s');
  assert.equal(duration(3 * 3600_000 + 20 * 60_000), '3 h 20 min');
  assert.equal(duration(52 * 3600_000), '2 d 4 h');
});
