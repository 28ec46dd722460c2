// Unit tests of the Pulsar sink's pieces that need no broker: CRC32C, protobuf and frame
// encoding, key hashing (vectors computed independently of this code), routing, message
// encoding from templates, error classes, the spec, and the native transport's option mapping
// against a stand-in for the pulsar-client module.
import assert from 'node:assert/strict';
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { WeirError } from '../../src/errors.js';
import { PulsarError } from '../../src/sinks/pulsar/errors.js';
import { silentLogger } from '../../src/log.js';
import { pulsarSinkType } from '../../src/sinks/pulsar/index.js';
import { classifyPulsarError, serverError } from '../../src/sinks/pulsar/classify.js';
import { compileEncoder } from '../../src/sinks/pulsar/encode.js';
import {
  loadPulsarClient,
  type NativeClientConfig,
  type NativeMessage,
  type NativeProducerConfig,
  type PulsarClientModule,
} from '../../src/sinks/pulsar/native/module.js';
import { NativeTransport } from '../../src/sinks/pulsar/native/native-transport.js';
import { nativeClientConfig, nativeProducerConfig } from '../../src/sinks/pulsar/native/options.js';
import { CommandType, decodeCommand, encodePing, encodeSend } from '../../src/sinks/pulsar/protocol/commands.js';
import { crc32c } from '@node-rs/crc32';
import { FrameReader, payloadFrame, simpleFrame } from '../../src/sinks/pulsar/protocol/frame.js';
import { encodeBatch, encodeMessageMetadata } from '../../src/sinks/pulsar/protocol/metadata.js';
import { decodeProto } from '../../src/sinks/pulsar/protocol/proto-reader.js';
import { ProtoWriter } from '../../src/sinks/pulsar/protocol/proto-writer.js';
import { javaStringHash, murmur3Hash, PartitionRouter } from '../../src/sinks/pulsar/routing.js';
import { PulsarConfigSpec, PulsarActionSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import { PendingLimit, type PendingSend } from '../../src/sinks/pulsar/transport.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('CRC32C (@node-rs/crc32, what frame.ts checksums a SEND with)', () => {
  it('matches the Castagnoli check values (RFC 3720 B.4)', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa);
    assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
    assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e);
  });
  it('agrees with a bit-at-a-time CRC-32C on every length 0..300', () => {
    const bitwise = (b: Uint8Array) => {
      let c = 0xffffffff;
      for (const x of b) {
        c ^= x;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      }
      return ~c >>> 0;
    };
    const data = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 131 + 7) & 0xff));
    for (let n = 0; n <= 300; n++) assert.equal(crc32c(data.subarray(0, n)), bitwise(data.subarray(0, n)), `length ${n}`);
  });
  it('continues across chunks', () => {
    const all = Buffer.from('hello, pulsar');
    assert.equal(crc32c(all.subarray(5), crc32c(all.subarray(0, 5))), crc32c(all));
  });
});

describe('protobuf', () => {
  it('encodes the reference examples of the protobuf encoding guide', () => {
    assert.equal(hex(new ProtoWriter().uint(1, 150).finish()), '089601');
    assert.equal(hex(new ProtoWriter().string(2, 'testing').finish()), '120774657374696e67');
    assert.equal(hex(new ProtoWriter().message(3, (w) => w.uint(1, 150)).finish()), '1a03089601');
    assert.equal(hex(new ProtoWriter().uint(2, 2 ** 40).finish()), '108080808080' + '20');
  });
  it('decodes what it encodes, including large varints', () => {
    const f = decodeProto(
      new ProtoWriter()
        .uint(1, 2 ** 50 + 3)
        .string(2, 'ключ')
        .bool(3, true)
        .finish(),
    );
    assert.equal(f.uint(1), 2 ** 50 + 3);
    assert.equal(f.string(2), 'ключ');
    assert.equal(f.bool(3), true);
    assert.equal(f.uint(9, 7), 7);
  });
  it('frames a PING as BaseCommand{type: PING, ping: {}}', () => {
    // type=18 → 08 12; field 18 length-delimited → tag 0x92 0x01, length 0
    assert.equal(hex(encodePing()), '0812920100');
    assert.equal(hex(simpleFrame(encodePing())), '00000009' + '00000005' + '0812920100');
  });
  it('decodes a SEND_RECEIPT with a message id', () => {
    const receipt = new ProtoWriter()
      .uint(1, CommandType.SEND_RECEIPT)
      .message(7, (w) =>
        w
          .uint(1, 4)
          .uint(2, 99)
          .message(3, (m) => m.uint(1, 12).uint(2, 34).uint(3, 5))
          .uint(4, 120),
      )
      .finish();
    assert.deepEqual(decodeCommand(receipt), {
      type: 'send_receipt',
      producerId: 4,
      sequenceId: 99,
      highestSequenceId: 120,
      messageId: { ledgerId: 12, entryId: 34, partition: 5, batchIndex: -1 },
    });
  });
  it('builds a SEND frame whose checksum, metadata and zlib batch a reader can take apart', () => {
    const msgs = [
      { payload: Buffer.from('{"a":1}'), key: 'dev-1', properties: { topic: 't/1' }, eventTime: 1700000000000 },
      { payload: Buffer.from('second') },
    ];
    const raw = encodeBatch(msgs, 10);
    const compressed = deflateSync(raw);
    const meta = encodeMessageMetadata({
      producerName: 'p',
      sequenceId: 10,
      publishTime: 5,
      compression: 2,
      uncompressedSize: raw.length,
      numMessagesInBatch: 2,
      highestSequenceId: 11,
    });
    const frame = payloadFrame(encodeSend(1, 10, 2, 11), meta, compressed);
    const [f] = new FrameReader().push(frame);
    assert.ok(f);
    const send = decodeProto(decodeProto(f.command).bytes(6)!);
    assert.deepEqual([send.uint(1), send.uint(2), send.uint(3), send.uint(6)], [1, 10, 2, 11]);
    // After the command: [u16 magic 0x0e01][u32 crc32c][u32 metadata size][metadata][payload].
    assert.ok(f.command.equals(frame.subarray(8, 8 + frame.readUInt32BE(4))));
    const rest = frame.subarray(8 + f.command.length);
    assert.equal(rest.readUInt16BE(0), 0x0e01);
    assert.equal(rest.readUInt32BE(2), crc32c(rest.subarray(6)));
    const metaLen = rest.readUInt32BE(6);
    const m = decodeProto(rest.subarray(10, 10 + metaLen));
    assert.deepEqual([m.string(1), m.uint(2), m.uint(8), m.uint(9), m.uint(11), m.uint(24)], ['p', 10, 2, raw.length, 2, 11]);
    const batch = inflateSync(rest.subarray(10 + metaLen));
    assert.ok(batch.equals(raw));
    const smLen = batch.readUInt32BE(0);
    const sm = decodeProto(batch.subarray(4, 4 + smLen));
    assert.equal(sm.string(2), 'dev-1');
    assert.equal(sm.uint(3), 7);
    assert.equal(sm.uint(5), 1700000000000);
    assert.equal(sm.uint(8), 10);
    assert.equal(decodeProto(sm.bytes(1)!).string(2), 't/1');
    assert.equal(batch.subarray(4 + smLen, 4 + smLen + 7).toString(), '{"a":1}');
    // The second message: its metadata (no key, no time), its sequence id and its bytes, ending the batch.
    const second = 4 + smLen + 7;
    const sm2Len = batch.readUInt32BE(second);
    const sm2 = decodeProto(batch.subarray(second + 4, second + 4 + sm2Len));
    assert.deepEqual([sm2.string(2), sm2.uint(3), sm2.uint(5), sm2.uint(8)], ['', 6, 0, 11]);
    assert.equal(batch.subarray(second + 4 + sm2Len).toString(), 'second');
  });
  it('reassembles frames split across chunks', () => {
    const a = simpleFrame(encodePing());
    const both = Buffer.concat([a, a]);
    const r = new FrameReader();
    assert.equal(r.push(both.subarray(0, 3)).length, 0);
    assert.equal(r.push(both.subarray(3, 15)).length, 1);
    assert.equal(r.push(both.subarray(15)).length, 1);
  });
});

describe('key hashing (vectors computed with independent implementations)', () => {
  it('JavaStringHash = String.hashCode() & Integer.MAX_VALUE over UTF-16', () => {
    assert.equal(javaStringHash(''), 0);
    assert.equal(javaStringHash('hello'), 99162322);
    assert.equal(javaStringHash('Hello World'), 1284938372); // hashCode -862545276
    assert.equal(javaStringHash('device-0042'), 556340629); // hashCode -1591143019
    assert.equal(javaStringHash('ключ'), 33309882);
    assert.equal(javaStringHash('😀x'), 54959989); // surrogate pair counts as two units
  });
  it('Murmur3_32Hash = MurmurHash3 x86_32, seed 0, UTF-8, & Integer.MAX_VALUE', () => {
    assert.equal(murmur3Hash(''), 0);
    assert.equal(murmur3Hash('hello'), 0x248bfa47);
    assert.equal(murmur3Hash('The quick brown fox jumps over the lazy dog'), 0x2e4ff723);
    assert.equal(murmur3Hash('device-0042'), 0x7e9d1b62);
    assert.equal(murmur3Hash('ключ'), 0x9a592042 & 0x7fffffff);
  });
  it('routes a key to hash % partitions and unkeyed messages round-robin', () => {
    const r = new PartitionRouter(10, 'java_string_hash');
    assert.equal(r.choose('device-0042'), 556340629 % 10);
    assert.equal(r.choose('device-0042'), 9);
    assert.deepEqual(
      Array.from({ length: 12 }, () => r.choose(undefined)),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1],
    );
    assert.equal(new PartitionRouter(10, 'murmur3_32_hash').choose('hello'), 613153351 % 10);
  });
});

describe('max_pending', () => {
  const tick = () => new Promise((r) => setImmediate(r));
  const msg = (name: string) => ({ payload: Buffer.from(name) });
  it("lets max sends through, hands a settled send's room to the next waiting one, and frees it before reporting", async () => {
    const started: PendingSend[] = [];
    const limit = new PendingLimit(2, (p) => started.push(p));
    const outcomes: Array<string> = [];
    for (const name of ['a', 'b', 'c']) limit.send(msg(name), (err) => outcomes.push(`${name}:${err?.message ?? 'ok'}:${limit.outstanding}`));
    await tick();
    assert.equal(started.length, 2, 'the third waits while two are outstanding');
    assert.equal(limit.waiting, 1);
    started[0]!.settle();
    assert.deepEqual(outcomes, ['a:ok:2'], "a's room went to the waiting third");
    await tick();
    assert.equal(started.length, 3, 'the third starts once a room is free');
    assert.equal(started[2]!.msg.payload.toString(), 'c');
    started[2]!.settle(new Error('refused'));
    started[1]!.settle();
    assert.deepEqual(outcomes, ['a:ok:2', 'c:refused:1', 'b:ok:0'], 'with nobody waiting, the room is free before the outcome is reported');
    assert.equal(limit.outstanding, 0);
  });
  it('reports each send once, and a send that throws as failed, giving its room back', async () => {
    const limit = new PendingLimit(1, (p) => {
      if (p.msg.payload.toString() === 'throws') throw new Error('thrown');
      p.settle();
      p.settle(new Error('late'));
    });
    const outcomes: string[] = [];
    limit.send(msg('settles twice'), (err) => outcomes.push(err?.message ?? 'ok'));
    limit.send(msg('throws'), (err) => outcomes.push(err?.message ?? 'ok'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(outcomes, ['ok', 'thrown']);
    assert.equal(limit.outstanding, 0);
  });
});

describe('message encoding from templates', () => {
  const event = { topic: 'device/d1/telemetry', clientid: 'd1', payload: Buffer.from('{"t":21.5}'), timestamp: 1700000000123 };
  it('defaults the payload to the output record as JSON and fills key, properties, event time', () => {
    const enc = compileEncoder({ key: '${clientid}', properties: { topic: '${topic}', fixed: 'x', t: '${t}' }, event_time: '${timestamp}' });
    const m = enc({ record: { t: 21.5, raw: Buffer.from('ab') }, event, ruleId: 'r' });
    assert.equal(m.payload.toString(), '{"t":21.5,"raw":"ab"}');
    assert.equal(m.key, 'd1');
    assert.deepEqual(m.properties, { topic: 'device/d1/telemetry', fixed: 'x', t: '21.5' });
    assert.equal(m.eventTime, 1700000000123);
  });
  it('sends a lone ${payload} byte-identical and leaves out an empty key', () => {
    const enc = compileEncoder({ payload: '${payload}', key: '${missing}', properties: {} });
    const m = enc({ record: {}, event, ruleId: 'r' });
    assert.ok(m.payload.equals(event.payload));
    assert.equal(m.key, undefined);
  });
  it('rejects an event time that is not a time', () => {
    const enc = compileEncoder({ event_time: '${clientid}', properties: {} });
    assert.throws(
      () => enc({ record: {}, event, ruleId: 'r' }),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.bad_event_time',
    );
  });
});

describe('classify', () => {
  it('retries lost connections and timeouts, rejects oversize messages, stops on auth', () => {
    assert.equal(classifyPulsarError(new PulsarError('sink.pulsar.connection_lost', 'x')), 'retry');
    assert.equal(classifyPulsarError(new PulsarError('sink.pulsar.connect_failed', 'x')), 'retry');
    assert.equal(classifyPulsarError(new PulsarError('sink.pulsar.send_timeout', 'x')), 'retry');
    assert.equal(classifyPulsarError(new PulsarError('sink.pulsar.message_too_large', 'x')), 'reject');
    assert.equal(classifyPulsarError(serverError('sink.pulsar.producer_failed', 'x', 'AuthorizationError')), 'fatal', 'a refusal is fatal');
    assert.equal(classifyPulsarError(serverError('sink.pulsar.producer_failed', 'x', 'ServiceNotReady')), 'retry', 'a broker not ready yet is retried');
    assert.equal(classifyPulsarError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })), 'retry');
    assert.equal(classifyPulsarError(new Error('Failed to send message: MessageTooBig')), 'reject');
    assert.equal(classifyPulsarError(new Error('Failed to send message: TimeOut')), 'retry');
    assert.equal(classifyPulsarError(new TypeError('bug')), 'fatal');
  });
});

function config(over: Partial<PulsarConfig> = {}): PulsarConfig {
  const base = Value.Default(PulsarConfigSpec, { service_url: 'pulsar://127.0.0.1:6650', topic: 'persistent://public/default/t', ...over }) as PulsarConfig;
  assert.ok(Value.Check(PulsarConfigSpec, base), [...Value.Errors(PulsarConfigSpec, base)].map((e) => `${e.path} ${e.message}`).join('; '));
  return base;
}

describe('spec', () => {
  it('documents every field and fills defaults', () => {
    for (const spec of [PulsarConfigSpec, PulsarActionSpec]) {
      for (const [name, field] of Object.entries(spec.properties)) {
        assert.ok((field as { description?: string }).description, `${name} has a description`);
        assert.ok((field as { examples?: unknown[] }).examples || 'default' in (field as object), `${name} has examples or a default`);
      }
    }
    const c = config();
    assert.equal(c.compression, 'zlib');
    assert.equal(c.transport, 'protocol');
    assert.deepEqual(c.batching, { max_messages: 1000, max_bytes: 131072, max_delay_ms: 1 });
    assert.equal(pulsarSinkType.type, 'pulsar');
  });
  it('accepts every compression on the protocol transport and refuses at creation what it cannot do', () => {
    const deps = { name: 'p', log: silentLogger };
    for (const compression of ['zlib', 'lz4', 'zstd', 'snappy', 'none'] as const) assert.ok(pulsarSinkType.create(config({ compression }), deps), compression);
    assert.throws(
      () => pulsarSinkType.create(config({ service_url: 'pulsar://a:6650,b:6650' }), deps),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.bad_service_url',
    );
    assert.ok(pulsarSinkType.create(config({ service_url: 'pulsar+ssl://h:6651' }), deps));
    assert.throws(
      () => pulsarSinkType.create(config({ create_topic: 'if_missing' }), deps),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.no_admin_url',
    );
    assert.ok(pulsarSinkType.create(config({ compression: 'zstd', transport: 'native' }), deps));
  });
  it('refuses unknown keys', () => {
    assert.equal(Value.Check(PulsarConfigSpec, { ...config(), nope: 1 }), false);
  });
});

/** A stand-in for the pulsar-client module (not installable here): records what weir asks of it. */
class FakePulsarClientModule implements PulsarClientModule {
  readonly clients: NativeClientConfig[] = [];
  readonly producers: NativeProducerConfig[] = [];
  readonly sent: NativeMessage[] = [];
  readonly Client: PulsarClientModule['Client'];
  readonly AuthenticationToken: PulsarClientModule['AuthenticationToken'];

  constructor(partitions = 10) {
    const fake = this;
    this.AuthenticationToken = class {
      constructor(readonly params: { token: string }) {}
    };
    this.Client = class {
      constructor(cfg: NativeClientConfig) {
        fake.clients.push(cfg);
      }
      async createProducer(cfg: NativeProducerConfig) {
        fake.producers.push(cfg);
        return {
          send: async (m: NativeMessage) => {
            fake.sent.push(m);
            return {};
          },
          flush: async () => null,
          close: async () => null,
        };
      }
      async getPartitionsForTopic(topic: string) {
        return Array.from({ length: partitions }, (_, i) => `${topic}-partition-${i}`);
      }
      async close() {
        return null;
      }
    };
  }
}

describe('native transport (FakePulsarClientModule stands in for pulsar-client)', () => {
  it('maps compression zlib, batching, routing and hashing to the native names', () => {
    const p = nativeProducerConfig(
      config({ compression: 'zlib', batching: { max_messages: 500, max_bytes: 65536, max_delay_ms: 0 }, max_pending: 2000, producer_name: 'w1' }),
    );
    assert.equal(p.compressionType, 'Zlib');
    assert.equal(p.batchingEnabled, true);
    assert.equal(p.batchingMaxMessages, 500);
    assert.equal(p.batchingMaxAllowedSizeInBytes, 65536);
    assert.equal(p.batchingMaxPublishDelayMs, 1);
    assert.equal(p.messageRoutingMode, 'RoundRobinDistribution');
    assert.equal(p.hashingScheme, 'JavaStringHash');
    assert.equal(p.maxPendingMessagesAcrossPartitions, 2000);
    assert.equal(p.blockIfQueueFull, true);
    assert.equal(p.producerName, 'w1');
    assert.equal(nativeProducerConfig(config({ compression: 'none', batching: { max_messages: 1, max_bytes: 1024, max_delay_ms: 5 } })).batchingEnabled, false);
    assert.equal(nativeProducerConfig(config({ compression: 'lz4', hashing_scheme: 'murmur3_32_hash' })).compressionType, 'LZ4');
    assert.equal(nativeProducerConfig(config({ hashing_scheme: 'murmur3_32_hash' })).hashingScheme, 'Murmur3_32Hash');
  });
  it('connects, reads partitions, sends key/properties/event time, passes the token', async () => {
    const fake = new FakePulsarClientModule(10);
    const t = new NativeTransport(config({ auth_token: 'jwt', transport: 'native' }), silentLogger, async () => fake);
    await t.connect(AbortSignal.timeout(1000));
    assert.equal(t.partitions, 10);
    assert.equal(fake.clients[0]!.serviceUrl, 'pulsar://127.0.0.1:6650');
    assert.deepEqual((fake.clients[0]!.authentication as { params: unknown }).params, { token: 'jwt' });
    assert.equal(fake.clients[0]!.tlsAllowInsecureConnection, undefined);
    await new Promise<void>((resolve, reject) =>
      t.send({ payload: Buffer.from('x'), key: 'd1', properties: { a: 'b' }, eventTime: 42 }, (err) => (err ? reject(err) : resolve())),
    );
    assert.deepEqual(fake.sent[0], { data: Buffer.from('x'), partitionKey: 'd1', properties: { a: 'b' }, eventTimestamp: 42 });
    await t.close();
  });
  it('maps TLS settings for pulsar+ssl://', () => {
    const fake = new FakePulsarClientModule();
    const c = nativeClientConfig(config({ service_url: 'pulsar+ssl://h:6651', tls_trust_certs_file: '/ca.pem' }), fake);
    assert.deepEqual([c.tlsTrustCertsFilePath, c.tlsAllowInsecureConnection, c.tlsValidateHostname], ['/ca.pem', false, true]);
    const n = nativeClientConfig(config({ service_url: 'pulsar+ssl://h:6651', tls_verify: 'none' }), fake);
    assert.deepEqual([n.tlsAllowInsecureConnection, n.tlsValidateHostname], [true, false]);
  });
  it('names the fix when pulsar-client is missing', async () => {
    await assert.rejects(
      loadPulsarClient(async () => {
        throw new Error("Cannot find package 'pulsar-client'");
      }),
      (e: unknown) =>
        e instanceof WeirError &&
        e.code === 'sink.pulsar.native_missing' &&
        /npm install pulsar-client/.test(e.message) &&
        /transport: protocol/.test(e.message),
    );
  });
  it('fails the same way through the real dynamic import on this machine, where the package cannot install', async () => {
    let present = true;
    try {
      await import('pulsar-client' as string);
    } catch {
      present = false;
    }
    if (present) return; // a machine that has it installed: nothing to check here
    await assert.rejects(loadPulsarClient(), (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.native_missing');
  });
});
