// weir's keepalive judged against a scripted broker peer that never answers PINGREQ — no real
// broker can be made to withhold PINGRESP on purpose (Mosquitto 2.0.11 did it by itself only
// under load, docs/operations.md), so this peer is a few lines of mqtt-packet over loopback, named
// as such. A PUBLISH that arrives after a PINGREQ counts as the broker's answer: weir keeps the
// connection while messages flow, and reconnects once they stop and the PINGRESP stays away.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import mqttPacket from 'mqtt-packet';
import { BrokerSpec, type BrokerConfig } from '../../src/config/schema.js';
import { MqttSession } from '../../src/core/ingest/mqtt-session.js';
import { silentLogger } from '../../src/log.js';

/** Answers CONNECT and SUBSCRIBE, ignores PINGREQ, and publishes while `publishing` is on. */
function scriptedPeer() {
  const peer = { connects: 0, publishing: true, server: net.createServer() };
  peer.server.on('connection', (sock) => {
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    let timer: NodeJS.Timeout | undefined;
    let id = 1;
    parser.on('packet', (p) => {
      if (p.cmd === 'connect') {
        peer.connects++;
        sock.write(mqttPacket.generate({ cmd: 'connack', returnCode: 0, reasonCode: 0, sessionPresent: false }, { protocolVersion: 5 }));
      } else if (p.cmd === 'subscribe') {
        sock.write(mqttPacket.generate({ cmd: 'suback', messageId: p.messageId, granted: [1] }, { protocolVersion: 5 }));
        timer = setInterval(() => {
          if (!peer.publishing) return;
          const messageId = (id++ % 65535) + 1;
          sock.write(
            mqttPacket.generate(
              { cmd: 'publish', topic: 'device/1/telemetry', payload: '{}', qos: 1, messageId, dup: false, retain: false },
              { protocolVersion: 5 },
            ),
          );
        }, 100);
      }
      // pingreq: no answer, on purpose.
    });
    sock.on('data', (d) => parser.parse(d));
    sock.on('close', () => clearInterval(timer));
    sock.on('error', () => {});
  });
  return peer;
}

const peer = scriptedPeer();
after(() => peer.server.close());

test('keepalive (scripted broker peer without PINGRESP): messages after the PINGREQ keep the connection; their absence ends it', async () => {
  await new Promise<void>((r) => peer.server.listen(0, '127.0.0.1', r));
  const port = (peer.server.address() as net.AddressInfo).port;
  const cfg = Value.Default(BrokerSpec, {
    url: `mqtt://127.0.0.1:${port}`,
    client_id: 'keepalive-test',
    connections: 1,
    keepalive_s: 1,
    reconnect: { min_ms: 50, max_ms: 100, quiet_ms: 0 },
  }) as BrokerConfig;
  let received = 0;
  const session = new MqttSession(
    cfg,
    0,
    (_m, settlement) => {
      received++;
      settlement.release();
    },
    silentLogger,
  );
  await session.setFilters(['device/+/telemetry']);
  session.start();
  try {
    await session.whenConnected();
    // Five keepalive periods with messages flowing and no PINGRESP: one connection throughout.
    await new Promise((r) => setTimeout(r, 5_000));
    assert.equal(peer.connects, 1, 'reconnected although messages kept arriving after each PINGREQ');
    assert.ok(received > 20, `messages flowed (${received})`);
    // Messages stop: the next PINGREQ goes unanswered and nothing else arrives, so weir reconnects.
    peer.publishing = false;
    await new Promise((r) => setTimeout(r, 3_500));
    assert.ok(peer.connects >= 2, `no reconnect after messages stopped and PINGRESP stayed away (${peer.connects} connects)`);
  } finally {
    await session.close();
  }
});
