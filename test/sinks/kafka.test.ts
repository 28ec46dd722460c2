// Unit tests of the Kafka sink's pure parts: its config/action schemas, error classes, murmur2
// and record encoding. The broker-facing behaviour is in kafka.int.test.ts, against a real broker.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import kafkajs from 'kafkajs';
import { WeirError } from '../../src/errors.js';
import { KafkaError } from '../../src/sinks/kafka/errors.js';
import { bindKafkaAction, checkTopicName } from '../../src/sinks/kafka/action.js';
import { classifyKafkaError } from '../../src/sinks/kafka/classify.js';
import { kafkaSinkType } from '../../src/sinks/kafka/index.js';
import { murmur2, partitionForKey, toPositive } from '../../src/sinks/kafka/partitioner.js';
import { KafkaActionSpec, KafkaConfigSpec, lintKafkaConfig, type KafkaAction, type KafkaConfig } from '../../src/sinks/kafka/spec.js';
import type { SinkInput } from '../../src/sinks/types.js';

const {
  KafkaJSProtocolError,
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSNonRetriableError,
} = kafkajs;

function config(input: Record<string, unknown>): KafkaConfig {
  const v = Value.Default(KafkaConfigSpec, structuredClone(input));
  const errors = [...Value.Errors(KafkaConfigSpec, v)];
  assert.deepEqual(
    errors.map((e) => `${e.path}: ${e.message}`),
    [],
  );
  return v as KafkaConfig;
}

function action(input: Record<string, unknown>): KafkaAction {
  const v = Value.Default(KafkaActionSpec, structuredClone(input));
  assert.ok(Value.Check(KafkaActionSpec, v), [...Value.Errors(KafkaActionSpec, v)].map((e) => `${e.path}: ${e.message}`).join('\n'));
  return v as KafkaAction;
}

/** Every property of every object schema, with its path. */
function properties(schema: TSchema, path = ''): Array<[string, TSchema]> {
  const out: Array<[string, TSchema]> = [];
  const props = (schema as { properties?: Record<string, TSchema> }).properties;
  if (props) {
    for (const [k, s] of Object.entries(props)) {
      out.push([`${path}${k}`, s]);
      out.push(...properties(s, `${path}${k}.`));
    }
  }
  return out;
}

describe('kafka spec', () => {
  it('fills the documented defaults', () => {
    const c = config({ brokers: ['127.0.0.1:9092'] });
    assert.equal(c.acks, -1);
    assert.equal(c.idempotent, true);
    assert.equal(c.compression, 'none');
    assert.equal(c.client_id, 'weir');
    assert.equal(c.max_in_flight_requests, 5);
    assert.equal(c.timeout_ms, 30_000);
    assert.equal(c.create_topics, undefined);
    assert.equal(action({ topic: 't' }).partitioner, 'murmur2');
  });

  it('describes every field, with examples, and refuses unknown keys', () => {
    for (const schema of [KafkaConfigSpec, KafkaActionSpec]) {
      assert.equal((schema as { additionalProperties?: unknown }).additionalProperties, false);
      for (const [path, s] of properties(schema)) {
        assert.ok(typeof s.description === 'string' && s.description.length > 0, `${path} has no description`);
        assert.ok(Array.isArray(s.examples) && s.examples.length > 0, `${path} has no examples`);
        if ((s as { type?: unknown }).type === 'object' && !('patternProperties' in s))
          assert.equal((s as { additionalProperties?: unknown }).additionalProperties, false, `${path} allows unknown keys`);
      }
    }
    assert.equal(Value.Check(KafkaConfigSpec, { ...config({ brokers: ['h:1'] }), bootstrap: 'x' }), false);
    assert.equal(Value.Check(KafkaActionSpec, { topic: 't', partitioner: 'murmur2', keys: 'x' }), false);
  });

  it('checks values', () => {
    assert.equal(Value.Check(KafkaConfigSpec, Value.Default(KafkaConfigSpec, { brokers: [] })), false);
    assert.equal(Value.Check(KafkaConfigSpec, Value.Default(KafkaConfigSpec, { brokers: ['no-port'] })), false);
    assert.equal(Value.Check(KafkaConfigSpec, Value.Default(KafkaConfigSpec, { brokers: ['h:1'], compression: 'brotli' })), false);
    assert.equal(Value.Check(KafkaConfigSpec, Value.Default(KafkaConfigSpec, { brokers: ['h:1'], acks: 2 })), false);
    assert.equal(Value.Check(KafkaActionSpec, { topic: 't', partitioner: 'random' }), false);
    const ct = config({ brokers: ['h:1'], create_topics: {} });
    assert.deepEqual(ct.create_topics, { partitions: 6, replication_factor: -1 });
  });

  it('lints settings that contradict each other', () => {
    assert.deepEqual(lintKafkaConfig(config({ brokers: ['h:1'] })), []);
    const messages = (c: KafkaConfig) =>
      lintKafkaConfig(c)
        .map((p) => `${p.path.join('.')}: ${p.message}`)
        .join();
    assert.match(messages(config({ brokers: ['h:1'], acks: 1 })), /acks: the idempotent producer needs acks: -1/);
    assert.deepEqual(lintKafkaConfig(config({ brokers: ['h:1'], acks: 1, idempotent: false })), []);
    assert.match(messages(config({ brokers: ['h:1'], max_in_flight_requests: 6 })), /max_in_flight_requests: at most 5/);
    assert.match(messages(config({ brokers: ['h:1'], ssl: { cert_file: '/c' } })), /ssl: cert_file and key_file go together/);
    assert.match(messages(config({ brokers: ['h:1', 'h:70000'] })), /brokers\.1: the port must be 1-65535/);
    assert.throws(() => kafkaSinkType.create(config({ brokers: ['h:1'], acks: 0 }), { name: 'k', log: undefined as never }), WeirError);
  });
});

describe('kafka classify', () => {
  const protocol = (code: number, type: string, retriable: boolean) => new KafkaJSProtocolError({ message: type, type, code, retriable } as never);

  it('retries what a stopped or restarting broker gives', () => {
    assert.equal(
      classifyKafkaError(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { code: 'ECONNREFUSED' } as never)),
      'retry',
    );
    assert.equal(classifyKafkaError(new KafkaJSRequestTimeoutError('Request Produce timed out')), 'retry');
    const exceeded = new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error'), { retryCount: 3, retryTime: 1000 });
    assert.equal(exceeded.retriable, false, 'kafkajs marks the wrapper non-retriable');
    assert.equal(classifyKafkaError(exceeded), 'retry', 'the cause decides');
    assert.equal(classifyKafkaError(protocol(6, 'NOT_LEADER_OR_FOLLOWER', true)), 'retry');
    assert.equal(classifyKafkaError(protocol(19, 'NOT_ENOUGH_REPLICAS', true)), 'retry');
    assert.equal(classifyKafkaError(protocol(7, 'REQUEST_TIMED_OUT', true)), 'retry');
    assert.equal(classifyKafkaError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), 'retry');
    assert.equal(classifyKafkaError(new KafkaError('sink.kafka.no_brokers', 'no brokers')), 'retry');
  });

  it('rejects records the broker will never take', () => {
    assert.equal(classifyKafkaError(protocol(10, 'MESSAGE_TOO_LARGE', false)), 'reject');
    assert.equal(classifyKafkaError(protocol(87, 'INVALID_RECORD', false)), 'reject');
    assert.equal(classifyKafkaError(protocol(2, 'CORRUPT_MESSAGE', true)), 'reject');
    assert.equal(classifyKafkaError(new KafkaJSNumberOfRetriesExceeded(protocol(10, 'MESSAGE_TOO_LARGE', false), { retryCount: 0, retryTime: 0 })), 'reject');
  });

  it('calls for an operator on auth, ACLs and missing topics', () => {
    assert.equal(classifyKafkaError(protocol(29, 'TOPIC_AUTHORIZATION_FAILED', false)), 'fatal');
    assert.equal(classifyKafkaError(protocol(3, 'UNKNOWN_TOPIC_OR_PARTITION', true)), 'fatal');
    assert.equal(classifyKafkaError(Reflect.construct(KafkaJSSASLAuthenticationError, ['SASL PLAIN authentication failed'])), 'fatal');
    assert.equal(classifyKafkaError(new WeirError('config.sink.kafka', 'bad')), 'fatal');
  });

  it('retries after the idempotent producer lost step (the sink recreates it)', () => {
    assert.equal(classifyKafkaError(protocol(45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', false)), 'retry');
    assert.equal(classifyKafkaError(protocol(59, 'UNKNOWN_PRODUCER_ID', false)), 'retry');
  });

  it('lets the worst class of an aggregate win, and retries the unknown', () => {
    const agg = Object.assign(new Error('many'), { errors: [new KafkaJSConnectionError('x'), protocol(10, 'MESSAGE_TOO_LARGE', false)] });
    assert.equal(classifyKafkaError(agg), 'reject');
    assert.equal(classifyKafkaError(new Error('something odd')), 'retry');
    assert.equal(classifyKafkaError(Reflect.construct(KafkaJSNonRetriableError, ['odd'])), 'retry');
  });
});

describe('kafka murmur2', () => {
  // Apache Kafka's own vectors (clients/src/test/.../utils/UtilsTest.java, testMurmur2).
  const vectors: Array<[string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [key, hash] of vectors) {
    it(`murmur2("${key}") = ${hash}`, () => assert.equal(murmur2(Buffer.from(key)), hash));
  }
  it('toPositive clears the sign bit like Utils.toPositive', () => {
    assert.equal(toPositive(-790332482), 1357151166);
    assert.equal(partitionForKey(Buffer.from('foobar'), 50), 1357151166 % 50);
  });
});

describe('kafka action encoding', () => {
  const input = (record: Record<string, unknown>, topic = 'device/d1/telemetry'): SinkInput => ({
    record,
    event: { topic, payload: Buffer.from('{"t":1}'), clientid: 'd1' },
    ruleId: 'r1',
  });

  it('defaults the value to the record as JSON and keys by template', () => {
    const b = bindKafkaAction(action({ topic: 'telemetry', key: '${clientid}' }), 'r1');
    const it1 = b.encode(input({ temp: 21.5, device: 'd1' }));
    assert.equal(it1.topic, 'telemetry');
    assert.equal(it1.message.value?.toString(), '{"temp":21.5,"device":"d1"}');
    assert.equal(it1.message.key?.toString(), 'd1');
  });

  it('renders topic, value and header templates', () => {
    const b = bindKafkaAction(action({ topic: 'site.${site}', value: '${payload}', headers: { rule: 'r1', dev: '${clientid}', gone: '${nope}' } }), 'r1');
    const it1 = b.encode(input({ site: 'a' }));
    assert.equal(it1.topic, 'site.a');
    assert.equal(it1.message.value?.toString(), '{"t":1}');
    assert.deepEqual(Object.keys(it1.message.headers ?? {}), ['rule', 'dev']);
    assert.equal(String(it1.message.headers?.dev), 'd1');
  });

  it('keeps raw bytes and JSON-encodes structured values', () => {
    const b = bindKafkaAction(action({ topic: 't', value: '${v}' }), 'r1');
    assert.deepEqual(b.encode(input({ v: Buffer.from([0, 255, 1]) })).message.value, Buffer.from([0, 255, 1]));
    assert.equal(b.encode(input({ v: { a: [1, 2] } })).message.value?.toString(), '{"a":[1,2]}');
    assert.equal(b.encode(input({ v: 42 })).message.value?.toString(), '42');
    assert.equal(b.encode(input({ v: null })).message.value, null, 'null is a tombstone');
    assert.throws(() => b.encode(input({})), /gave no value/);
  });

  it('leaves out empty keys and rejects illegal topic names', () => {
    const b = bindKafkaAction(action({ topic: '${t}', key: '${k}' }), 'r1');
    assert.equal(b.encode(input({ t: 'ok', k: '' })).message.key, null);
    assert.throws(() => b.encode(input({ t: 'bad/topic' })), /not a legal Kafka topic name/);
    assert.throws(() => b.encode(input({})), /not a legal Kafka topic name/);
    assert.throws(() => bindKafkaAction(action({ topic: 'has space' }), 'r1'), WeirError);
    assert.equal(checkTopicName('a'.repeat(249)), undefined);
    assert.notEqual(checkTopicName('a'.repeat(250)), undefined);
    assert.notEqual(checkTopicName('..'), undefined);
  });
});

// kafkajs as patched at install (patches/kafkajs+2.2.4.patch): the parts the patch rewrote.
describe('kafkajs produce path as patched', () => {
  const require = createRequire(import.meta.url);
  type Grouper = (a: {
    topic: string;
    partitionMetadata: Array<{ partitionId: number; leader: number }>;
    messages: kafkajs.Message[];
    partitioner: (a: { message: kafkajs.Message }) => number;
  }) => Record<string, kafkajs.Message[]>;
  const group = require('kafkajs/src/producer/groupMessagesPerPartition.js') as Grouper;
  const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: object) => { buffer: Buffer };

  it('groups every message once, in order, under the partition the partitioner picks', () => {
    const partitionMetadata = Array.from({ length: 6 }, (_, p) => ({ partitionId: p, leader: 0 }));
    const messages = Array.from({ length: 5000 }, (_, i) => ({ key: `device-${i % 97}`, value: String(i) }));
    const partitioner = ({ message }: { message: kafkajs.Message }) => partitionForKey(Buffer.from(message.key as string), 6);
    const grouped = group({ topic: 't', partitionMetadata, messages, partitioner });
    const expected: Record<string, kafkajs.Message[]> = {};
    for (const m of messages) (expected[partitioner({ message: m })] ??= []).push(m);
    assert.deepEqual(grouped, expected);
    assert.equal(
      Object.values(grouped).reduce((n, l) => n + l.length, 0),
      5000,
    );
    assert.deepEqual(group({ topic: 't', partitionMetadata: [], messages, partitioner }), {});
  });

  it('encodes a record to the bytes of the Kafka record format', () => {
    // length 8, attributes 0, timestamp delta 0, offset delta 0, key "k", value "v", no headers
    assert.deepEqual(
      [...encodeRecord({ key: Buffer.from('k'), value: Buffer.from('v'), offsetDelta: 0, timestampDelta: 0 }).buffer],
      [0x10, 0, 0, 0, 2, 0x6b, 2, 0x76, 0],
    );
    // a null key, offset delta 3, one header h=x: the encoder grows past its sized start correctly
    const withHeader = encodeRecord({ key: null, value: Buffer.from('v'), headers: { h: Buffer.from('x') }, offsetDelta: 3, timestampDelta: 0 }).buffer;
    assert.deepEqual([...withHeader], [0x16, 0, 0, 6, 1, 2, 0x76, 2, 2, 0x68, 2, 0x78]);
  });

  it('writes varints and varlongs as the zigzag LEB128 of the Kafka protocol, the int32 shortcut included', () => {
    type Encoder = { writeVarLong(v: number): Encoder; writeVarInt(v: number): Encoder; buffer: Buffer };
    const Encoder = require('kafkajs/src/protocol/encoder.js') as { new (): Encoder; sizeOfVarLong(v: number): number };
    // The protocol's definition, in BigInt: zigzag over 64 bits, then 7 bits a byte, low first.
    const reference = (v: number): number[] => {
      let z = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
      const out: number[] = [];
      while (z >= 0x80n) {
        out.push(Number(z & 0x7fn) | 0x80);
        z >>= 7n;
      }
      return [...out, Number(z)];
    };
    const values = [0, 1, -1, 63, 64, -64, -65, 8191, 8192, 2 ** 30, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 40, 1733140000123, -1733140000123];
    for (const v of values) {
      assert.deepEqual([...new Encoder().writeVarLong(v).buffer], reference(v), `varlong ${v}`);
      assert.equal(Encoder.sizeOfVarLong(v), reference(v).length, `size of varlong ${v}`);
      if ((v | 0) === v) assert.deepEqual([...new Encoder().writeVarInt(v).buffer], reference(v), `varint ${v}`);
    }
  });

  it('computes the record batch CRC32C (Castagnoli) whichever implementation loaded', () => {
    const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
    // The standard check value of CRC-32C, and the empty input.
    assert.equal(crc32C(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32C(Buffer.alloc(0)), 0);
  });
});
