// Numeric options are checked where options are parsed (src/cli/args.ts), for every command: a
// value that is not a number in range is a usage error (exit 2) naming the option, and a valid
// one arrives as a number.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeNumber, numberOf, numberOption, parse } from '../../src/cli/args.js';

/** Runs parse() with stderr captured. */
function parsed(args: string[]) {
  const options = {
    'grace-ms': numberOption({ unit: 'milliseconds', min: 0 }),
    port: numberOption({ unit: 'port', noun: 'a port number', min: 0, max: 65_535 }),
    rate: numberOption({ unit: 'letters per second', min: 0, aboveMin: true, fraction: true, suffix: '/s' }),
    name: { type: 'string' },
  } as const;
  const write = process.stderr.write;
  let err = '';
  process.stderr.write = ((chunk: string) => {
    err += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    return { result: parse(args, options, 'HELP\n'), err };
  } finally {
    process.stderr.write = write;
  }
}

test('a valid number arrives as a number; other options are untouched', () => {
  const { result } = parsed(['--grace-ms', '2000', '--port=0', '--rate', '2.5/s', '--name', '42']);
  assert.ok('values' in result);
  assert.deepEqual(result.values, { 'grace-ms': 2000, port: 0, rate: 2.5, name: '42' });
});

test('a value that is not a number in range: exit 2, the first line names the option and what it takes', () => {
  const cases: Array<[string[], string]> = [
    [['--grace-ms', 'abc'], "error: --grace-ms takes a whole number of milliseconds, 0 or more, not 'abc'"],
    [['--grace-ms=1.5'], "error: --grace-ms takes a whole number of milliseconds, 0 or more, not '1.5'"],
    [['--grace-ms='], "error: --grace-ms takes a whole number of milliseconds, 0 or more, not ''"],
    [['--grace-ms=1e3'], "error: --grace-ms takes a whole number of milliseconds, 0 or more, not '1e3'"],
    [['--port', '65536'], "error: --port takes a port number, from 0 to 65535, not '65536'"],
    [['--rate', '0'], "error: --rate takes a number of letters per second, above 0 (e.g. 200 or 200/s), not '0'"],
  ];
  for (const [args, line] of cases) {
    const { result, err } = parsed(args);
    assert.deepEqual(result, { exit: 2 }, args.join(' '));
    assert.equal(err.split('\n')[0], line);
  }
});

test('numberOf and describeNumber', () => {
  assert.equal(numberOf(' 12 ', { unit: 'x', min: 0 }), 12);
  assert.equal(numberOf('99999999999999999999', { unit: 'x', min: 0 }), undefined, 'beyond a safe integer');
  assert.equal(numberOf('-1', { unit: 'x', min: 0 }), undefined);
  assert.equal(numberOf('-1', { unit: 'x', min: -5 }), -1);
  assert.equal(describeNumber({ unit: 'devices', min: 0 }), 'a whole number of devices, 0 or more');
});
