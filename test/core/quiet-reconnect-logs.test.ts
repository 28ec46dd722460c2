// The quiet watch's reconnect and a connection lost while weir stops, against a real Mosquitto of
// this file's own (so it can be stopped under a session that is stopping):
// - a quiet reconnect is one log line, with its reason; it was four (went quiet, a warn
//   "disconnected from broker", connected, subscribed) for each connection, each time;
// - once reading has stopped (weir run's shutdown: pauseReading), the session neither knocks nor
//   reconnects, so there is no `subscribed` after `stopping`: the broker redelivers what was
//   unacked to the next start, and a new connection would only read again.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import mqtt from 'mqtt';
import { pino } from 'pino';
import { BrokerSpec, type BrokerConfig } from '../../src/config/schema.js';
import { MqttSession } from '../../src/core/ingest/mqtt-session.js';
import { type MosquittoBroker, startMosquitto } from '../harness/mosquitto.js';
import { waitFor } from '../harness/process.js';

interface Line {
  level: number;
  msg: string;
  client_id?: string;
  [k: string]: unknown;
}

/** A logger at `info` (weir's default) whose lines the test reads. */
function capturingLogger() {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { lines, log: pino({ level: 'info' }, sink) };
}

let broker: MosquittoBroker;
before(async () => {
  broker = await startMosquitto();
});
after(() => broker.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function brokerConfig(clientId: string, quietMs: number): BrokerConfig {
  return Value.Default(BrokerSpec, {
    url: broker.url,
    client_id: clientId,
    connections: 1,
    keepalive_s: 30,
    reconnect: { min_ms: 50, max_ms: 200, refused_ms: 50, quiet_ms: quietMs },
  }) as BrokerConfig;
}

/** A transient session (nothing left on the broker) that counts its connections. */
function session(clientId: string, quietMs: number, onMessage: MqttSession['handler'] = (_m, s) => s.release()) {
  const { lines, log } = capturingLogger();
  const s = { connects: 0, lines, session: undefined as unknown as MqttSession };
  s.session = new MqttSession(brokerConfig(clientId, quietMs), 0, onMessage, log, { onState: (up) => void (up && s.connects++) }, 'transient');
  return s;
}

test('a quiet reconnect logs one line, with its reason, and no warning', { timeout: 60_000 }, async () => {
  const s = session('quiet-logs', 1000);
  await s.session.setFilters(['quiet-logs/#']);
  s.session.start();
  try {
    await waitFor(() => s.lines.some((l) => l.msg === 'subscribed'), 20_000, 'the first subscription');
    const from = s.lines.length;
    await waitFor(() => s.connects >= 2, 20_000, 'the quiet reconnect');
    // Its SUBACK and anything else it would log.
    await sleep(1500);
    const logged = s.lines.slice(from);
    assert.equal(logged.length, 1, `one line per quiet reconnect, got:\n${logged.map((l) => JSON.stringify(l)).join('\n')}`);
    assert.equal(logged[0]!.level, 30, 'at info: weir chose to reconnect, nothing failed');
    assert.match(logged[0]!.msg, /quiet/);
    assert.equal(logged[0]!.client_id, 'quiet-logs-0');
    assert.equal(logged[0]!.quiet_ms, 1000);
    assert.equal(s.connects, 2, 'one knock: the next waits for a message');
  } finally {
    await s.session.close();
  }
});

test('once reading has stopped (shutdown), a quiet connection is not reconnected and nothing is subscribed again', { timeout: 60_000 }, async () => {
  const s = session('quiet-stopping', 1000);
  await s.session.setFilters(['quiet-stopping/#']);
  s.session.start();
  try {
    await waitFor(() => s.lines.some((l) => l.msg === 'subscribed'), 20_000, 'the first subscription');
    s.session.pauseReading();
    const from = s.lines.length;
    // Three quiet periods: before, the watch knocked after one and the session subscribed again.
    await sleep(3500);
    assert.equal(s.connects, 1, 'reconnected while stopping');
    assert.deepEqual(
      s.lines.slice(from).map((l) => l.msg),
      [],
    );
  } finally {
    await s.session.close();
  }
});

test('once reading has stopped (shutdown), a connection the broker drops is not reopened, with a message held', { timeout: 60_000 }, async () => {
  let held = 0;
  const s = session('drop-stopping', 0, () => void held++);
  await s.session.setFilters(['drop-stopping/#']);
  s.session.start();
  const pub = await mqtt.connectAsync(broker.url, { clientId: 'drop-stopping-pub', reconnectPeriod: 0 });
  try {
    await waitFor(() => s.lines.some((l) => l.msg === 'subscribed'), 20_000, 'the first subscription');
    await pub.publishAsync('drop-stopping/1', '{}', { qos: 1 });
    await waitFor(() => held === 1, 10_000, 'the message to arrive (and be held: never settled)');
    await pub.endAsync();
    s.session.pauseReading();
    const from = s.lines.length;
    await broker.stop();
    await broker.start();
    // The session probes a refusing port every refused_ms: long enough to have reconnected many times.
    await sleep(3000);
    assert.equal(s.connects, 1, 'reconnected while stopping');
    const msgs = s.lines.slice(from).map((l) => l.msg);
    assert.ok(!msgs.includes('subscribed') && !msgs.includes('connected to broker'), `logged while stopping: ${msgs.join(' | ')}`);
    assert.ok(msgs.includes('disconnected from broker'), 'the loss of the connection is still said');
  } finally {
    await s.session.close();
  }
});
