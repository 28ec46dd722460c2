// What SinkHealth logs and reports, with its reminder interval shortened: the first
// outcome always, one line per change, reminders bounded whatever the number of retries, a schema
// error per rule that a probe does not clear and a write does.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { SinkHealth } from '../../src/core/path/sink-health.js';
import { Tally } from '../../src/metrics/tally.js';

function recorder() {
  const lines: Array<{ level: number; msg: string; err?: string; rule?: string; kind?: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as (typeof lines)[number]);
      done();
    },
  });
  return { lines, log: pino({ level: 'debug' }, stream) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WARN = 40;
const ERROR = 50;

test('an unreachable sink is logged at its first attempt, then at most once per interval however often it is retried', async () => {
  const { lines, log } = recorder();
  const up = new Tally({});
  const h = new SinkHealth('tsdb', log, up, 200);
  const until = Date.now() + 500;
  while (Date.now() < until) {
    h.unreachable(new Error('connect ECONNREFUSED 127.0.0.1:9'));
    await sleep(10);
  }
  const warns = lines.filter((l) => l.level === WARN);
  assert.equal(warns[0]?.msg.startsWith('sink unreachable at start'), true, JSON.stringify(warns[0]));
  assert.equal(warns[0]?.err, 'connect ECONNREFUSED 127.0.0.1:9');
  // ~45 failures in 500 ms: the first line and a reminder at 200 and 400 ms.
  assert.ok(warns.length >= 2 && warns.length <= 3, `${warns.length} warn lines`);
  assert.equal(h.status().state, 'down');
  assert.match(h.status().reason, /ECONNREFUSED/);
  assert.equal(up.value, 0);
  h.reachable();
  assert.equal(up.value, 1);
  assert.equal(lines.at(-1)?.msg, 'sink up again');
});

test('a sink up at its first attempt says so', () => {
  const { lines, log } = recorder();
  const h = new SinkHealth('tsdb', log, new Tally({}), 200);
  assert.equal(h.ready, false, 'not ready before the first attempt');
  h.reachable();
  assert.deepEqual(
    lines.map((l) => l.msg),
    ['sink up'],
  );
  assert.equal(h.ready, true);
});

test('a schema error holds the rule until one of its writes goes through; a probe does not clear it', async () => {
  const { lines, log } = recorder();
  const up = new Tally({});
  const h = new SinkHealth('tsdb', log, up, 5_000);
  h.reachable();
  const err = new Error('table telemetry has no column site');
  for (let i = 0; i < 20; i++) {
    h.failing('r1', 'schema error', err);
    h.reachable(); // the periodic probe: the server answers
    h.wrote('r2'); // another rule's table is fine
    await sleep(10);
  }
  const errors = lines.filter((l) => l.level === ERROR);
  assert.equal(errors.length, 1, 'one error line for 20 failures within the interval');
  assert.match(errors[0]!.msg, /^schema error: /);
  assert.equal(errors[0]!.rule, 'r1');
  const s = h.status();
  assert.equal(s.ready, false);
  assert.equal(s.state, 'failing');
  assert.equal(s.reason, 'schema error: table telemetry has no column site');
  assert.deepEqual(Object.keys(s.failing), ['r1']);
  assert.equal(up.value, 0);
  h.wrote('r1');
  assert.equal(h.status().state, 'up');
  assert.equal(up.value, 1);
});
