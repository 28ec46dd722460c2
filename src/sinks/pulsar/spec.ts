// The Pulsar sink's settings: the single source of their names, defaults and docs.
import { Type, type Static } from '@sinclair/typebox';
import { TemplateString } from '../../config/common-spec.js';
import { urlProblem } from '../../config/url-check.js';
import type { SettingProblem } from '../types.js';
import { serviceUrlProblem } from './service-url.js';

const Compression = Type.Union([Type.Literal('none'), Type.Literal('zlib'), Type.Literal('lz4'), Type.Literal('zstd'), Type.Literal('snappy')], {
  default: 'zlib',
  description:
    "Batch compression with one of Pulsar's codecs, on either transport: zlib (zlib-wrapped deflate), lz4 (the raw LZ4 block), zstd (zstd frames) or snappy (the raw snappy block).",
  examples: ['zlib'],
});

export const PulsarBatchingSpec = Type.Object(
  {
    max_messages: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      default: 1000,
      description: 'A Pulsar batch (one entry, one SEND) holds at most this many messages; 1 turns batching off.',
      examples: [1000],
    }),
    max_bytes: Type.Integer({
      minimum: 1024,
      maximum: 4 * 1024 * 1024,
      default: 128 * 1024,
      description: 'A Pulsar batch is sent once its uncompressed payloads reach this many bytes.',
      examples: [131072],
    }),
    max_delay_ms: Type.Integer({
      minimum: 0,
      maximum: 10_000,
      default: 1,
      description: 'A Pulsar batch is sent this long after its first message, full or not (the Java client default is 1 ms).',
      examples: [1],
    }),
  },
  {
    additionalProperties: false,
    default: {},
    description: "The producer's batching into Pulsar's batch format (per partition), beneath the core's own batching of items.",
    examples: [{ max_messages: 1000, max_bytes: 131072, max_delay_ms: 1 }],
  },
);

export const PulsarConfigSpec = Type.Object(
  {
    service_url: Type.String({
      pattern: '^pulsar(\\+ssl)?://',
      description: "The broker's binary protocol URL: pulsar://host:6650, or pulsar+ssl://host:6651 for TLS.",
      examples: ['pulsar://pulsar:6650'],
    }),
    admin_url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'The admin REST URL; needed by create_topic and by weir reconcile (partitioned-stats).',
        examples: ['http://pulsar:8080'],
      }),
    ),
    topic: Type.String({
      pattern: '^(persistent|non-persistent)://[^/]+/[^/]+/[^/]+$',
      description: 'The full topic name. A partitioned topic gets one producer per partition.',
      examples: ['persistent://public/default/telemetry'],
    }),
    create_topic: Type.Union([Type.Literal('never'), Type.Literal('if_missing')], {
      default: 'never',
      description:
        'if_missing: create the topic as a partitioned topic with `partitions` partitions through the admin REST API when it does not exist yet (needs admin_url).',
      examples: ['if_missing'],
    }),
    partitions: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 1,
      description: 'Partitions of a topic that create_topic creates; an existing topic keeps its own count.',
      examples: [10],
    }),
    compression: Compression,
    batching: PulsarBatchingSpec,
    max_pending: Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      default: 10_000,
      description: 'Messages sent and not yet acknowledged by the broker, across partitions; a write waits for room (backpressure).',
      examples: [10000],
    }),
    hashing_scheme: Type.Union([Type.Literal('java_string_hash'), Type.Literal('murmur3_32_hash')], {
      default: 'java_string_hash',
      description:
        "How a message key picks its partition: the Java client's JavaStringHash (its default) or Murmur3_32Hash. Both transports use the same, so a key keeps its partition whichever runs.",
      examples: ['java_string_hash'],
    }),
    transport: Type.Union([Type.Literal('protocol'), Type.Literal('native')], {
      default: 'protocol',
      description:
        "protocol: Pulsar's binary protocol in TypeScript, no native code (see docs/pulsar.md for measured throughput). native: the pulsar-client npm package (C++ client), which must be installed separately.",
      examples: ['protocol'],
    }),
    tls_trust_certs_file: Type.Optional(
      Type.String({
        description: 'PEM file of the CA certificates trusted for pulsar+ssl:// (default: the system CAs).',
        examples: ['/etc/weir/pulsar-ca.pem'],
      }),
    ),
    tls_verify: Type.Union([Type.Literal('full'), Type.Literal('none')], {
      default: 'full',
      description: "pulsar+ssl://: full checks the broker's certificate chain and host name; none accepts any certificate (testing only).",
      examples: ['full'],
    }),
    auth_token: Type.Optional(
      Type.String({ description: 'JWT for token authentication. Put it in an ${ENV} variable; it is never logged.', examples: ['${PULSAR_TOKEN}'] }),
    ),
    producer_name: Type.Optional(
      Type.String({
        description: 'Producer name; by default the broker assigns a unique one. A fixed name allows only one weir instance per topic.',
        examples: ['weir-1'],
      }),
    ),
    send_timeout_ms: Type.Integer({
      minimum: 100,
      default: 30_000,
      description: 'A batch without a send receipt after this long fails (retriable) and the connection is re-opened.',
      examples: [30000],
    }),
    connect_timeout_ms: Type.Integer({
      minimum: 100,
      default: 10_000,
      description: 'Limit for opening a connection and for each lookup or producer request.',
      examples: [10000],
    }),
    dead_letter_topic: Type.Optional(
      Type.String({
        pattern: '^persistent://[^/]+/[^/]+/[^/]+$',
        description:
          'When set, this sink keeps dead letters in this (non-partitioned) topic, for setups without PostgreSQL: one message per letter keyed by its id, replay marks and purges (empty payloads) as newer messages of the key, kept by the durable subscription weir-dead-letters; weir dlq reads them through admin_url (needed).',
        examples: ['persistent://public/default/weir-dead-letters'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type PulsarConfig = Static<typeof PulsarConfigSpec>;

export const PulsarActionSpec = Type.Object(
  {
    key: Type.Optional(
      TemplateString({
        description:
          "Message key template. Keyed messages go to the partition the key hashes to, so `${clientid}` keeps one device's messages in one partition, in order. Without a key, messages go round-robin over the partitions.",
        examples: ['${clientid}'],
      }),
    ),
    properties: Type.Record(Type.String({ minLength: 1 }), TemplateString(), {
      default: {},
      description: 'Message properties: name → template, rendered as strings.',
      examples: [{ topic: '${topic}', rule: 'telemetry' }],
    }),
    event_time: Type.Optional(
      TemplateString({
        description: "Template for the message's event time: milliseconds since the epoch, or a date string.",
        examples: ['${timestamp}'],
      }),
    ),
    payload: Type.Optional(
      TemplateString({
        description: 'Payload template. Default: the rule output record as JSON. A lone ${x} that holds bytes or a string is sent as is; other values as JSON.',
        examples: ['${payload}'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type PulsarAction = Static<typeof PulsarActionSpec>;

/** What the schema cannot check: URLs that can work, and settings that need one another. */
export function lintPulsarConfig(cfg: PulsarConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const service = serviceUrlProblem(cfg.service_url, cfg.transport);
  if (service) problems.push({ path: ['service_url'], value: cfg.service_url, message: service, code: 'config.invalid_url' });
  const admin =
    cfg.admin_url === undefined
      ? undefined
      : urlProblem(cfg.admin_url, { schemes: ['http:', 'https:'], expected: 'http:// or https://', example: 'http://pulsar:8080' });
  if (admin) problems.push({ path: ['admin_url'], value: cfg.admin_url, message: admin, code: 'config.invalid_url' });
  if (cfg.create_topic === 'if_missing' && cfg.admin_url === undefined) {
    problems.push({
      path: ['create_topic'],
      message: 'if_missing creates the topic through the admin REST API: add admin_url, e.g. admin_url: http://pulsar:8080',
      code: 'config.sink.pulsar',
    });
  }
  if (cfg.dead_letter_topic !== undefined && cfg.admin_url === undefined) {
    problems.push({
      path: ['dead_letter_topic'],
      message: 'weir dlq reads the dead-letter topic through the admin REST API: add admin_url, e.g. admin_url: http://pulsar:8080',
      code: 'config.sink.pulsar',
    });
  }
  return problems;
}
