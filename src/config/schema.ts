// The schema of weir.yaml and of a rule file: the single source of every key's name, type,
// default and description. Validation (config/load.ts), the TypeScript types and the JSON Schema
// for editors all come from here.
import { Type, type Static } from '@sinclair/typebox';

const Tls = Type.Object(
  {
    ca: Type.Optional(Type.String({ description: 'Path of a PEM file with the CA certificates to trust.' })),
    cert: Type.Optional(Type.String({ description: 'Path of the client certificate (PEM) for mutual TLS.' })),
    key: Type.Optional(Type.String({ description: 'Path of the client private key (PEM).' })),
    verify: Type.Boolean({ default: true, description: "Verify the broker's certificate and host name. Turn off only for tests." }),
    servername: Type.Optional(Type.String({ description: 'SNI host name, when it differs from the URL host.' })),
  },
  { additionalProperties: false },
);

export const BrokerSpec = Type.Object(
  {
    url: Type.String({ default: 'mqtt://127.0.0.1:1883', description: 'mqtt://host:port, or mqtts:// for TLS.', examples: ['mqtts://emqx:8883'] }),
    protocol_version: Type.Union([Type.Literal(5), Type.Literal(4)], { default: 5, description: '5 = MQTT 5, 4 = MQTT 3.1.1.' }),
    client_id: Type.String({
      minLength: 1,
      default: 'weir',
      description: 'Connection i (0-based) uses "<client_id>-<i>". Keep it stable across restarts: the broker keeps each session and its queue under this id.',
    }),
    connections: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'MQTT connections, all in one share group.' }),
    share_group: Type.String({
      default: 'weir',
      pattern: '^[^/+#]*$',
      description: 'Subscriptions are $share/<share_group>/<filter>. Empty: plain subscriptions (one connection only).',
    }),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String({ description: 'Use ${ENV} interpolation; never logged.' })),
    keepalive_s: Type.Integer({ minimum: 0, maximum: 65535, default: 30 }),
    session_expiry_s: Type.Integer({
      minimum: 0,
      default: 7 * 24 * 3600,
      description: 'How long the broker keeps the session (and queues messages) while weir is away. MQTT 5 only; 3.1.1 sessions do not expire.',
    }),
    tls: Type.Optional(Tls),
    reconnect: Type.Object(
      {
        min_ms: Type.Integer({ minimum: 10, default: 500 }),
        max_ms: Type.Integer({ minimum: 10, default: 30_000 }),
        refused_ms: Type.Integer({
          minimum: 0,
          default: 50,
          description:
            "While the broker's port refuses connections (a broker restarting), retry every refused_ms/2 to refused_ms for up to 60 s instead of backing off, so that weir subscribes again as soon as the broker is back (Mosquitto does not restore $share subscriptions across a restart: what arrives before weir subscribes again is lost). 0 = always back off.",
        }),
        quiet_ms: Type.Integer({
          minimum: 0,
          default: 10_000,
          description:
            'A connection quiet for this many ms with nothing unacked is reconnected, once until a message arrives again: HiveMQ CE, restarted after a crash, may hold what it queued for a shared subscription until the session connects again. An idle fleet costs one reconnect per quiet spell. 0 = never.',
        }),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'Exponential backoff with full jitter between reconnect attempts, except while connections are refused (refused_ms).',
      },
    ),
    ack: Type.Union([Type.Literal('after_commit'), Type.Literal('on_receive')], {
      default: 'after_commit',
      description:
        'after_commit: PUBACK only once every output of the message is durable (at-least-once). on_receive: PUBACK at once (fast, loses in-flight messages on a crash).',
    }),
    max_unacked: Type.Integer({
      minimum: 1,
      maximum: 65535,
      default: 2_000,
      description:
        "Per connection: messages received whose outputs are not durable yet (with ack: on_receive and for QoS 0 too, though already acked). When reached, weir stops reading the socket and the broker queues. Also sent as MQTT 5 Receive Maximum. Size it to a connection's rate × the time to commit a batch (docs/ingest.md); larger only holds more in memory.",
    }),
    max_payload_bytes: Type.Integer({
      minimum: 1,
      default: 1024 * 1024,
      description: 'Larger payloads are dead-lettered (reason payload_too_large) instead of evaluated.',
    }),
    fleet: Type.Object(
      {
        presence: Type.Union([Type.Literal('on'), Type.Literal('off')], {
          default: 'on',
          description:
            'on: announce this replica on the retained topic <topic_prefix>/<share_group>/members/<client_id> (MQTT 5, a will marks it gone if it dies), read the others, and at SIGTERM drain when another member is live, keep the sessions when it is the last (docs/fleet.md). Needs MQTT 5 and a share_group; off without them. off: SIGTERM keeps the sessions (weir run --drain drains).',
        }),
        topic_prefix: Type.String({
          minLength: 1,
          default: 'weir',
          pattern: '^[^+#]*[^/+#]$',
          description: 'First levels of the presence topics; the broker must let weir publish and subscribe under <topic_prefix>/<share_group>/members/.',
        }),
        will_delay_s: Type.Integer({
          minimum: 0,
          default: 15,
          description:
            "How long the broker waits after this replica's presence connection drops before it publishes the will (state gone): a restart quicker than this is not seen as a loss.",
        }),
        adopt_after_s: Type.Integer({
          minimum: 0,
          default: 30,
          description:
            'A member gone (its will published) or stopped with its sessions kept, and not back for this long, has its sessions adopted by one live member: stored, then ended. Counted from when the adopter saw it gone. 0 = never adopt.',
        }),
        leave_wait_ms: Type.Integer({
          minimum: 0,
          default: 5_000,
          description: "At SIGTERM, how long to wait for the broker to return this replica's own `leaving` announcement; without it, the sessions are kept.",
        }),
      },
      {
        additionalProperties: false,
        default: {},
        description:
          'Replicas that know each other through the broker: presence, the leave decision at SIGTERM, adoption of orphaned sessions (docs/fleet.md).',
      },
    ),
    publisher_clientid: Type.Object(
      {
        user_property: Type.Optional(Type.String({ description: 'MQTT 5 User Property carrying the publisher clientid (first choice).' })),
        topic_level: Type.Optional(Type.Integer({ minimum: 1, description: '1-based topic level holding the clientid (device/<id>/telemetry → 2).' })),
      },
      { additionalProperties: false, default: {}, description: 'Where `clientid` comes from: a subscriber is not told who published.' },
    ),
  },
  { additionalProperties: false, default: {} },
);
export type BrokerConfig = Static<typeof BrokerSpec>;

export const HttpSpec = Type.Object(
  {
    host: Type.String({ default: '0.0.0.0' }),
    port: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 9464,
      description: '/metrics, /healthz, /readyz, /rules, /sinks and the console (/api/). 0 picks a free port.',
    }),
    basic_auth: Type.Optional(
      Type.Object(
        {
          username: Type.String({ minLength: 1 }),
          password: Type.String({ minLength: 1, description: 'Use ${ENV} interpolation; never logged.' }),
        },
        {
          additionalProperties: false,
          description:
            "HTTP basic authentication for /metrics, /rules, /sinks, the console (/api/) and the detail of /readyz. /healthz, and /readyz's status code with {ready}, stay open for liveness and readiness probes.",
        },
      ),
    ),
    tls: Type.Optional(
      Type.Object(
        {
          cert_file: Type.String({ minLength: 1, description: "Path of the server's certificate (PEM, the chain after it), relative to weir.yaml." }),
          key_file: Type.String({ minLength: 1, description: "Path of the server's private key (PEM), relative to weir.yaml." }),
          client_ca_file: Type.Optional(
            Type.String({
              minLength: 1,
              description:
                'Path of the CA certificates (PEM) that sign client certificates, relative to weir.yaml. When set, every request needs a client certificate signed by one of them.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "HTTPS instead of HTTP on http.port, as in Prometheus exporter-toolkit's web config (tls_server_config). The files are read when weir starts; weir check checks that they exist and hold a certificate and key that match.",
        },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** The console's settings (docs/console.md): what its Reconcile view checks beyond the counters. */
export const ConsoleSpec = Type.Object(
  {
    sequence: Type.Array(
      Type.String({
        pattern: '^[^:\\s]+:[^:\\s]+:[^:\\s]+(:[^:\\s]+)?$',
        description: 'TABLE:KEY_COLUMN:SEQ_COLUMN[:TIME_COLUMN], as `weir reconcile --sequence` takes it.',
      }),
      {
        default: [],
        description:
          "Tables whose sequence numbers the console's Reconcile view checks, as `weir reconcile --sequence` does: gaps per key and, with a time column, keys silent for longer than stale_after of their usual intervals. Read from the postgres sink whose actions write the table. Run every sequence_every_s while the view is open, never otherwise.",
        examples: [['telemetry:device_id:seq:ts']],
      },
    ),
    stale_after: Type.Integer({
      minimum: 1,
      default: 10,
      description: 'A key silent for more than this many of its usual intervals is stale (`weir reconcile --stale-after`).',
    }),
    sequence_every_s: Type.Integer({
      minimum: 10,
      default: 60,
      description: 'How often the open Reconcile view runs the sequence checks: each reads its whole table (seconds on millions of rows, docs/benchmarks.md).',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const DeadLetterSpec = Type.Object(
  {
    sink: Type.Optional(Type.String({ description: 'A sink that stores dead letters itself (postgres: table weir_dead_letter).' })),
    file: Type.Optional(Type.String({ description: 'Otherwise: a JSON-lines file, fsynced before the messages are acked (relative to weir.yaml).' })),
    fallback_file: Type.String({
      default: 'weir-dead-letter-fallback.jsonl',
      description:
        'Where a dead letter goes that its store refuses even in reduced form (JSON lines, fsynced, counted in weir_dead_letter_fallback_total); relative to weir.yaml.',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const SchemaSpec = Type.Object(
  {
    type: Type.Union([Type.Literal('protobuf'), Type.Literal('avro'), Type.Literal('json')], {
      description: 'protobuf: a .proto file (proto2 or proto3, its imports from its own folder); avro: an .avsc file; json: a JSON Schema file.',
    }),
    file: Type.String({ minLength: 1, description: 'The schema file, relative to weir.yaml.', examples: ['schemas/telemetry.proto'] }),
    message_type: Type.Optional(
      Type.String({
        minLength: 1,
        description: "protobuf only: the message type schema_decode/schema_encode and payload_schema use when a call names none (EMQX's third argument).",
        examples: ['Telemetry', 'acme.v1.Telemetry'],
      }),
    ),
  },
  { additionalProperties: false },
);

/** weir.yaml. `sinks` entries are validated against their type's spec in config/load.ts. */
export const WeirSpec = Type.Object(
  {
    broker: BrokerSpec,
    sinks: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), Type.Object({ type: Type.String() }, { additionalProperties: true }), {
      default: {},
      description: 'Named sinks; rules refer to them by name.',
    }),
    schemas: Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]*$' }), SchemaSpec, {
      default: {},
      description:
        "Named schemas for binary payloads (docs/rules.md, 'Binary payloads'): rules decode with schema_decode(name, payload) and may require one with payload_schema. Loaded at start and by weir check, and again with each rule reload.",
    }),
    rules_dir: Type.String({ default: './rules', description: 'Directory of rule files (*.yaml), relative to weir.yaml.' }),
    dead_letter: DeadLetterSpec,
    http: HttpSpec,
    console: ConsoleSpec,
    log_level: Type.Union(
      ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    log_format: Type.Union([Type.Literal('json'), Type.Literal('pretty')], {
      default: 'json',
      description:
        'json: one JSON object per line, for a log collector. pretty: one readable line per entry for a terminal (time, level, message, then key=value fields; the level coloured on a terminal unless NO_COLOR is set).',
    }),
    migrate_on_start: Type.Boolean({
      default: false,
      description:
        'Apply migrations/ to every postgres sink before anything connects; while that fails (the database not up yet), weir retries with backoff, not ready and reading nothing (docs/operations.md).',
    }),
    node: Type.String({ default: 'weir@localhost', description: 'The `node` event field.' }),
  },
  { additionalProperties: false },
);
export type WeirFileConfig = Static<typeof WeirSpec>;

export const RuleTestSpec = Type.Object(
  {
    name: Type.Optional(Type.String()),
    event: Type.Record(Type.String(), Type.Unknown(), { description: 'Event fields as in `weir eval`; payload may be an object (it is JSON-encoded).' }),
    expect: Type.Object(
      {
        outputs: Type.Optional(Type.Array(Type.Unknown())),
        no_match: Type.Optional(Type.Boolean()),
        error: Type.Optional(Type.Union([Type.Boolean(), Type.String()], { description: 'true for any error, or text the error must contain.' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** A rule file in rules/. `actions[*]` are validated against their sink type's action spec. */
export const RuleFileSpec = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9_.-]+$', description: 'Unique rule id; the `rule` metric label.' }),
    description: Type.Optional(Type.String()),
    enabled: Type.Boolean({ default: true }),
    sql: Type.Optional(Type.String({ description: 'EMQX rule SQL.' })),
    jsonata: Type.Optional(Type.String({ description: 'A JSONata expression instead of sql; needs `from`.' })),
    from: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'Topic filters of a JSONata rule.' })),
    payload_format: Type.Union([Type.Literal('json'), Type.Literal('raw')], {
      default: 'json',
      description: 'json: a payload that is not JSON is dead-lettered (reason invalid_payload) instead of evaluated. raw: the rule gets any payload.',
    }),
    payload_schema: Type.Optional(
      Type.String({
        description:
          "A schema of weir.yaml's `schemas:` every payload must decode with (and, for json, validate against) before the rule runs; one that does not is dead-lettered (reason schema_invalid). Replaces payload_format's JSON check.",
      }),
    ),
    actions: Type.Array(Type.Object({ sink: Type.String() }, { additionalProperties: true }), { default: [] }),
    tests: Type.Optional(Type.Array(RuleTestSpec)),
  },
  { additionalProperties: false },
);
export type RuleFileConfig = Static<typeof RuleFileSpec>;
