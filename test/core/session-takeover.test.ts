// How weir tells a session taken over by another client with the same client id from other drops
// (src/core/ingest/session-takeover.ts): the watch on its own with explicit times, and a session against
// a scripted broker peer that ends each connection with DISCONNECT 0x8E, as EMQX, HiveMQ and newer
// Mosquitto do. Debian's Mosquitto 2.0.11 only closes the socket; that case runs against the real
// broker in test/e2e/session-takeover.test.ts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import mqttPacket from 'mqtt-packet';
import { BrokerSpec, type BrokerConfig } from '../../src/config/schema.js';
import { MqttSession } from '../../src/core/ingest/mqtt-session.js';
import { SESSION_TAKEN_OVER, SILENT_ENDS, STABLE_MS, TakeoverWatch } from '../../src/core/ingest/session-takeover.js';
import { silentLogger } from '../../src/log.js';
import { TAKEN_OVER_POLICY } from '../../src/retry/backoff.js';

test('DISCONNECT 0x8E is a takeover at once; each wait after one is longer, up to a minute', () => {
  const w = new TakeoverWatch();
  w.connected(0);
  assert.match(w.ended({ by: 'broker', reason: SESSION_TAKEN_OVER }, 1000) ?? '', /DISCONNECT 0x8E/);
  assert.ok(w.takenOver);
  const waits: number[] = [];
  for (let i = 0; i < 10; i++) {
    waits.push(w.delay());
    w.connected(1000 * i);
    w.ended({ by: 'broker', reason: SESSION_TAKEN_OVER }, 1000 * i + 10);
  }
  assert.ok(waits[0]! >= TAKEN_OVER_POLICY.initial_ms, `${waits}`);
  for (let i = 1; i < 6; i++) assert.ok(waits[i]! > waits[i - 1]!, `waits grow: ${waits}`);
  assert.ok(
    waits.every((ms) => ms <= TAKEN_OVER_POLICY.max_ms * 1.2),
    `${waits}`,
  );
});

test('closes without a reason: a takeover from the second in a row; one weir made, a failed attempt or a long connection starts the count again', () => {
  assert.equal(SILENT_ENDS, 2);
  const w = new TakeoverWatch();
  w.connected(0);
  assert.equal(w.ended({ by: 'broker' }, 10), undefined, 'one close alone is a broker stopping, say');
  w.connected(20);
  assert.match(w.ended({ by: 'broker' }, 30) ?? '', /without a reason 2 times in a row/);

  const other = new TakeoverWatch();
  other.connected(0);
  other.ended({ by: 'broker' }, 10);
  other.failed(); // the next attempt was refused: a broker restarting
  other.connected(20);
  assert.equal(other.ended({ by: 'broker' }, 30), undefined);
  other.connected(40);
  assert.equal(other.ended({ by: 'weir' }, 50), undefined);
  other.connected(60);
  assert.equal(other.ended({ by: 'broker' }, 70), undefined, 'the count started again after weir ended one');
  other.connected(80);
  assert.equal(other.ended({ by: 'broker' }, 80 + STABLE_MS), undefined, 'a connection up for STABLE_MS starts the count again');
  assert.equal(other.ended({ by: 'broker', reason: 0x8b }, 90 + STABLE_MS), undefined, 'another reason (server shutting down) is no takeover');
});

test('a connection up for STABLE_MS ends the takeover and its backoff', () => {
  const w = new TakeoverWatch();
  w.connected(0);
  w.ended({ by: 'broker', reason: SESSION_TAKEN_OVER }, 1);
  w.ended({ by: 'broker', reason: SESSION_TAKEN_OVER }, 2);
  assert.ok(w.delay() >= 2 * TAKEN_OVER_POLICY.initial_ms);
  assert.equal(w.stable(), true);
  assert.equal(w.takenOver, undefined);
  assert.equal(w.stable(), false);
});

/** Accepts every CONNECT, then ends the connection with DISCONNECT 0x8E after `afterMs`. */
function takingPeer(afterMs: number) {
  const peer = { connects: [] as number[], server: net.createServer() };
  peer.server.on('connection', (sock) => {
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', (p) => {
      if (p.cmd === 'connect') {
        peer.connects.push(Date.now());
        sock.write(mqttPacket.generate({ cmd: 'connack', returnCode: 0, reasonCode: 0, sessionPresent: true }, { protocolVersion: 5 }));
        setTimeout(() => sock.end(mqttPacket.generate({ cmd: 'disconnect', reasonCode: SESSION_TAKEN_OVER }, { protocolVersion: 5 })), afterMs);
      } else if (p.cmd === 'subscribe') {
        sock.write(mqttPacket.generate({ cmd: 'suback', messageId: p.messageId, granted: [1] }, { protocolVersion: 5 }));
      }
    });
    sock.on('data', (d) => parser.parse(d));
    sock.on('error', () => {});
  });
  return peer;
}

const peer = takingPeer(100);
after(() => peer.server.close());

test('a session told DISCONNECT 0x8E (scripted broker peer): counted, reported, and the reconnects slow down', { timeout: 60_000 }, async () => {
  await new Promise<void>((r) => peer.server.listen(0, '127.0.0.1', r));
  const port = (peer.server.address() as net.AddressInfo).port;
  const cfg = Value.Default(BrokerSpec, {
    url: `mqtt://127.0.0.1:${port}`,
    client_id: 'takeover-test',
    connections: 1,
    reconnect: { min_ms: 10, max_ms: 20, quiet_ms: 0 },
  }) as BrokerConfig;
  let takenOver = 0;
  const session = new MqttSession(cfg, 0, (_m, s) => s.release(), silentLogger, { onTakenOver: () => takenOver++ });
  session.start();
  try {
    // 1 s, 2 s, 4 s (each up to 20% more): four connections take at least 7 s, where the
    // ordinary reconnect (10-20 ms) would have made hundreds.
    while (peer.connects.length < 4) await new Promise((r) => setTimeout(r, 100));
    const gaps = peer.connects.slice(1).map((t, i) => t - peer.connects[i]!);
    assert.ok(
      gaps.every((g, i) => g >= 1000 * 2 ** i),
      `waits between connections ${gaps}`,
    );
    assert.equal(takenOver, 3, 'each DISCONNECT 0x8E counted');
    assert.match(session.takenOver ?? '', /DISCONNECT 0x8E/);
  } finally {
    await session.close();
  }
});
