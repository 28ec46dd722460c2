// The Kafka sink's settings: the single source of their names, defaults and docs. The TypeScript
// types below are derived from these schemas; README.md's settings reference and sample.yaml are
// generated from them (npm run sink-docs).
import { Type, type Static } from '@sinclair/typebox';
import { TemplateString } from '../../config/common-spec.js';
import type { SettingProblem } from '../types.js';

export const COMPRESSIONS = ['none', 'gzip', 'lz4', 'snappy', 'zstd'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

const SslSpec = Type.Object(
  {
    ca_file: Type.Optional(
      Type.String({ description: "PEM file of the CA that signed the brokers' certificates; default: the system CAs.", examples: ['/etc/weir/kafka-ca.pem'] }),
    ),
    cert_file: Type.Optional(Type.String({ description: 'PEM client certificate, for mutual TLS.', examples: ['/etc/weir/kafka-client.pem'] })),
    key_file: Type.Optional(Type.String({ description: 'PEM private key of cert_file.', examples: ['/etc/weir/kafka-client.key'] })),
    reject_unauthorized: Type.Boolean({
      default: true,
      description: 'Refuse brokers whose certificate does not verify. Turn off only for a test cluster.',
      examples: [true],
    }),
    servername: Type.Optional(
      Type.String({ description: 'TLS SNI / certificate name to check when it differs from the broker host.', examples: ['kafka.internal'] }),
    ),
  },
  { additionalProperties: false, description: 'TLS to the brokers; present = on.', examples: [{ ca_file: '/etc/weir/kafka-ca.pem' }] },
);

const SaslSpec = Type.Object(
  {
    mechanism: Type.Union([Type.Literal('plain'), Type.Literal('scram-sha-256'), Type.Literal('scram-sha-512')], {
      description: 'SASL mechanism the brokers accept.',
      examples: ['scram-sha-512'],
    }),
    username: Type.String({ description: 'SASL user.', examples: ['weir'] }),
    password: Type.String({ description: 'SASL password; use an ${ENV} variable. Never logged.', examples: ['${KAFKA_PASSWORD}'] }),
  },
  {
    additionalProperties: false,
    description: 'SASL authentication; usually together with ssl.',
    examples: [{ mechanism: 'scram-sha-512', username: 'weir', password: '${KAFKA_PASSWORD}' }],
  },
);

const CreateTopicsSpec = Type.Object(
  {
    partitions: Type.Integer({ minimum: 1, maximum: 10_000, default: 6, description: 'Partitions of each topic the sink creates.', examples: [6] }),
    replication_factor: Type.Integer({
      minimum: -1,
      maximum: 32,
      default: -1,
      description: "Replicas of each topic the sink creates; -1 = the broker's default.replication.factor.",
      examples: [3],
    }),
  },
  {
    additionalProperties: false,
    description:
      'When set, a topic the sink writes to for the first time is created if missing (admin CreateTopics). When absent, topics must exist: the sink never relies on the broker creating topics on first use.',
    examples: [{ partitions: 6, replication_factor: 3 }],
  },
);

export const KafkaConfigSpec = Type.Object(
  {
    brokers: Type.Array(Type.String({ minLength: 1, pattern: '^[^\\s:]+:\\d{1,5}$', examples: ['kafka-1:9092'] }), {
      minItems: 1,
      description: 'Bootstrap brokers, host:port.',
      examples: [['kafka-1:9092', 'kafka-2:9092']],
    }),
    client_id: Type.String({ minLength: 1, default: 'weir', description: 'Kafka client.id, shown in broker logs and quotas.', examples: ['weir'] }),
    ssl: Type.Optional(SslSpec),
    sasl: Type.Optional(SaslSpec),
    acks: Type.Union([Type.Literal(-1), Type.Literal(0), Type.Literal(1)], {
      default: -1,
      description:
        'Broker acknowledgements a write waits for: -1 = all in-sync replicas (required by idempotent and by at-least-once), 1 = the leader only, 0 = none (a message may be acked upstream and lost).',
      examples: [-1],
    }),
    idempotent: Type.Boolean({
      default: true,
      description: 'Idempotent producer: the broker drops duplicates of a batch that the client resent after a lost response. Needs acks -1.',
      examples: [true],
    }),
    compression: Type.Union(
      COMPRESSIONS.map((c) => Type.Literal(c)),
      {
        default: 'none',
        description: 'Record batch compression. gzip is built into kafkajs; lz4, snappy and zstd use bundled codecs (README.md, Compression).',
        examples: ['lz4'],
      },
    ),
    create_topics: Type.Optional(CreateTopicsSpec),
    max_in_flight_requests: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 5,
      description: 'Produce requests in flight on one broker connection. The idempotent producer keeps order per partition up to 5.',
      examples: [5],
    }),
    timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 300_000,
      default: 30_000,
      description: 'How long one produce request may wait for its acknowledgements (broker side); the client waits 2 s more for the response.',
      examples: [30_000],
    }),
    connection_timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 120_000,
      default: 3_000,
      description: 'TCP/TLS connect timeout per broker.',
      examples: [3_000],
    }),
    dead_letter_topic: Type.Optional(
      Type.String({
        pattern: '^[a-zA-Z0-9._-]{1,249}$',
        description:
          'When set, this sink keeps dead letters in this topic (one record per letter, keyed by its id; replay marks and purges are newer records with the key), for setups without PostgreSQL: weir dlq lists, replays and purges them. With create_topics weir creates it compacted, with one partition; create an existing one with cleanup.policy=compact.',
        examples: ['weir-dead-letters'],
      }),
    ),
  },
  { additionalProperties: false, description: 'A Kafka cluster that rule outputs are produced to.' },
);
export type KafkaConfig = Static<typeof KafkaConfigSpec>;

export const PARTITIONERS = ['murmur2', 'round_robin'] as const;
export type Partitioner = (typeof PARTITIONERS)[number];

export const KafkaActionSpec = Type.Object(
  {
    topic: TemplateString({
      minLength: 1,
      description:
        'Topic to produce to; a ${path} template is allowed. A rendered name that is not a legal Kafka topic name (1-249 characters of a-z, A-Z, 0-9, ., _ and -) dead-letters the record.',
      examples: ['telemetry', 'telemetry.${site}'],
    }),
    key: Type.Optional(
      TemplateString({
        description: 'Record key template. Records with one key go to one partition, in order. Missing, null or empty = no key.',
        examples: ['${clientid}'],
      }),
    ),
    value: Type.Optional(
      TemplateString({
        description:
          'Record value template. Default: the whole output record as JSON. A lone ${path} gives the value itself (bytes and strings as they are, numbers, maps and lists as JSON); a missing value dead-letters the record; null writes a null value (a tombstone).',
        examples: ['${payload}'],
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), TemplateString(), {
        description: 'Record headers: name → template. A header whose value is missing is left out.',
        examples: [{ rule: 'telemetry', device: '${clientid}' }],
      }),
    ),
    partitioner: Type.Union(
      PARTITIONERS.map((p) => Type.Literal(p)),
      {
        default: 'murmur2',
        description:
          "murmur2: by key with the Java client's hash (toPositive(murmur2(key)) % partitions), so every client puts a key in the same partition; records without a key rotate over the available partitions. round_robin: rotate, ignoring the key.",
        examples: ['murmur2'],
      },
    ),
  },
  { additionalProperties: false, description: "Where and how one rule's outputs are produced." },
);
export type KafkaAction = Static<typeof KafkaActionSpec>;

/** What the schema cannot check: broker ports in range, and settings that contradict each other. */
export function lintKafkaConfig(cfg: KafkaConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const [i, b] of cfg.brokers.entries()) {
    const port = Number(b.slice(b.lastIndexOf(':') + 1));
    if (port < 1 || port > 65535)
      problems.push({ path: ['brokers', i], value: b, message: 'the port must be 1-65535, e.g. kafka-1:9092', code: 'config.invalid_url' });
  }
  const sink = 'config.sink.kafka';
  if (cfg.idempotent && cfg.acks !== -1)
    problems.push({
      path: ['acks'],
      message: `the idempotent producer needs acks: -1 (all in-sync replicas); write acks: -1, or idempotent: false to keep acks: ${cfg.acks}`,
      code: sink,
    });
  if (cfg.idempotent && cfg.max_in_flight_requests > 5)
    problems.push({ path: ['max_in_flight_requests'], message: 'at most 5 with the idempotent producer (or idempotent: false)', code: sink });
  if (cfg.ssl && (cfg.ssl.cert_file === undefined) !== (cfg.ssl.key_file === undefined))
    problems.push({ path: ['ssl'], message: 'cert_file and key_file go together: give both for mutual TLS, or neither', code: sink });
  return problems;
}
