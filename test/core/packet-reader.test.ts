// PacketReader against mqtt-packet's own parser: the same byte stream, split anywhere, must give
// the same packets (PUBLISH decoded by the fast path, everything else delegated).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { PacketReader } from '../../src/core/ingest/packet-reader.js';

/** A small deterministic PRNG, so a failure can be replayed. */
function rng(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function packets(v: 4 | 5, rand: () => number): Packet[] {
  const out: Packet[] = [{ cmd: 'connack', sessionPresent: true, returnCode: 0, reasonCode: 0 } as Packet];
  for (let i = 0; i < 300; i++) {
    const r = rand();
    const qos = (i % 3 === 0 ? 0 : 1) as 0 | 1;
    const size = r < 0.05 ? 70_000 + Math.floor(rand() * 200_000) : Math.floor(rand() * 400);
    const payload = Buffer.alloc(size, i % 251);
    const topic = `device/${Math.floor(rand() * 1000)}/tele€metry`;
    const p: Record<string, unknown> = { cmd: 'publish', topic, payload, qos, retain: rand() < 0.1, dup: rand() < 0.1 };
    if (qos) p.messageId = 1 + Math.floor(rand() * 65535);
    if (v === 5 && rand() < 0.2) p.properties = { userProperties: { clientid: `dev-${i}` }, contentType: 'application/json' };
    out.push(p as unknown as Packet);
    if (r > 0.97) out.push({ cmd: 'pingresp' });
    if (r > 0.98) out.push({ cmd: 'suback', messageId: 7, granted: [1, 0x80] } as Packet);
  }
  return out;
}

function viaMqttPacket(bytes: Buffer, v: 4 | 5): Packet[] {
  const got: Packet[] = [];
  const p = mqttPacket.parser({ protocolVersion: v });
  p.on('packet', (x: Packet) => got.push(x));
  p.parse(bytes);
  return got;
}

function comparable(p: Packet): unknown {
  const x = p as unknown as Record<string, unknown>;
  if (x.cmd !== 'publish') return { cmd: x.cmd, messageId: x.messageId, granted: x.granted, sessionPresent: x.sessionPresent };
  return {
    cmd: 'publish',
    topic: x.topic,
    payload: Buffer.from(x.payload as Buffer).toString('hex'),
    qos: x.qos,
    retain: x.retain,
    dup: x.dup,
    messageId: x.messageId,
    properties: x.properties,
  };
}

for (const v of [4, 5] as const) {
  test(`MQTT ${v === 5 ? '5' : '3.1.1'}: the same packets as mqtt-packet, whatever the chunk boundaries`, () => {
    const rand = rng(v * 7919);
    const list = packets(v, rand);
    const bytes = Buffer.concat(list.map((p) => mqttPacket.generate(p, { protocolVersion: v })));
    const expected = viaMqttPacket(bytes, v).map(comparable);
    assert.equal(expected.length, list.length);
    for (const chunking of ['whole', 'bytes', 'random'] as const) {
      const got: Packet[] = [];
      const reader = new PacketReader(
        v,
        (p) => got.push(p),
        (err) => assert.fail(err),
      );
      if (chunking === 'whole') reader.push(bytes);
      else if (chunking === 'bytes') {
        // One byte at a time through the first 20 kB (every header boundary), then the rest.
        for (let i = 0; i < 20_000; i++) reader.push(bytes.subarray(i, i + 1));
        reader.push(bytes.subarray(20_000));
      } else
        for (let i = 0; i < bytes.length; ) {
          const n = 1 + Math.floor(rand() * 70_000);
          reader.push(bytes.subarray(i, i + n));
          i += n;
        }
      assert.deepEqual(got.map(comparable), expected, chunking);
    }
  });
}

test('a malformed remaining length is reported, not looped on', () => {
  const errors: Error[] = [];
  const reader = new PacketReader(
    4,
    () => assert.fail('no packet expected'),
    (e) => errors.push(e),
  );
  reader.push(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]));
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /malformed/);
});
