// The mqtt (republish) sink's settings: the single source of their names, defaults and docs. The
// TypeScript types are derived from these schemas; README.md's settings reference and sample.yaml
// are generated from them (npm run sink-docs).
import { Type, type Static } from '@sinclair/typebox';
import { TemplateString } from '../../config/common-spec.js';
import { brokerUrlProblem } from '../../config/broker-url.js';
import type { SettingProblem } from '../types.js';

const TlsSpec = Type.Object(
  {
    ca: Type.Optional(
      Type.String({ description: 'PEM file of the CA certificates to trust; default: the system CAs.', examples: ['/etc/weir/broker-ca.pem'] }),
    ),
    cert: Type.Optional(Type.String({ description: 'PEM client certificate, for mutual TLS.', examples: ['/etc/weir/client.pem'] })),
    key: Type.Optional(Type.String({ description: 'PEM private key of cert.', examples: ['/etc/weir/client.key'] })),
    verify: Type.Boolean({ default: true, description: "Verify the broker's certificate and host name. Turn off only for tests.", examples: [true] }),
    servername: Type.Optional(Type.String({ description: 'SNI host name, when it differs from the URL host.', examples: ['broker.internal'] })),
  },
  { additionalProperties: false, description: 'TLS options for an mqtts:// url (the same keys as broker.tls).', examples: [{ ca: '/etc/weir/broker-ca.pem' }] },
);

export const MqttConfigSpec = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        description:
          "Broker to republish to, mqtt://host:port or mqtts://host:port. Absent: the broker weir reads from (broker.url, with its protocol_version, username, password and tls), over a connection of the sink's own, never one of the share-group connections.",
        examples: ['mqtts://alerts-broker:8883'],
      }),
    ),
    protocol_version: Type.Optional(
      Type.Union([Type.Literal(5), Type.Literal(4)], {
        description:
          '5 = MQTT 5, 4 = MQTT 3.1.1 (no reason codes, properties or user properties). Default: broker.protocol_version when url is absent, else 5.',
        examples: [5],
      }),
    ),
    client_id: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "Client id of the sink's connection. Default: '<broker.client_id>-<sink name>'. The session is clean: a publish not acknowledged when the connection drops is sent again by weir's retry.",
        examples: ['weir-alerts'],
      }),
    ),
    username: Type.Optional(Type.String({ description: 'User name; with url absent, default broker.username.', examples: ['weir'] })),
    password: Type.Optional(
      Type.String({
        description: 'Password; use an ${ENV} variable. Never logged. With url absent, default broker.password.',
        examples: ['${ALERTS_PASSWORD}'],
      }),
    ),
    tls: Type.Optional(TlsSpec),
    keepalive_s: Type.Integer({ minimum: 0, maximum: 65535, default: 30, description: 'MQTT keep alive of the connection.', examples: [30] }),
    connect_timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 120_000,
      default: 5_000,
      description: 'How long a connection attempt may take (TCP, TLS and CONNACK).',
      examples: [5_000],
    }),
    publish_timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 600_000,
      default: 30_000,
      description: 'How long a QoS 1 publish may wait for its PUBACK; then the connection is dropped and the unacknowledged messages are retried.',
      examples: [30_000],
    }),
    max_in_flight_messages: Type.Integer({
      minimum: 1,
      maximum: 65535,
      default: 1_000,
      description:
        "QoS 1 publishes waiting for their PUBACK at once, across all writes. MQTT 5: never more than the Receive Maximum the broker's CONNACK gives (HiveMQ CE disconnects a client that exceeds it).",
      examples: [1_000],
    }),
  },
  { additionalProperties: false, description: 'An MQTT broker that rule outputs are republished to.' },
);
export type MqttConfig = Static<typeof MqttConfigSpec>;

const PropertiesSpec = Type.Object(
  {
    payload_format_indicator: Type.Optional(
      Type.Boolean({ description: 'MQTT 5 Payload Format Indicator: true = the payload is UTF-8 text.', examples: [true] }),
    ),
    message_expiry_interval: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 4_294_967_295, description: 'MQTT 5 Message Expiry Interval, seconds.', examples: [3600] }),
    ),
    content_type: Type.Optional(TemplateString({ description: 'MQTT 5 Content Type (template).', examples: ['application/json'] })),
    response_topic: Type.Optional(
      TemplateString({ description: 'MQTT 5 Response Topic (template); left out when it renders empty.', examples: ['replies/${clientid}'] }),
    ),
    correlation_data: Type.Optional(
      TemplateString({ description: 'MQTT 5 Correlation Data (template, sent as its UTF-8 bytes); left out when it renders empty.', examples: ['${id}'] }),
    ),
  },
  {
    additionalProperties: false,
    description: 'MQTT 5 PUBLISH properties (ignored with protocol_version 4).',
    examples: [{ content_type: 'application/json' }],
  },
);

export const MqttActionSpec = Type.Object(
  {
    topic: TemplateString({
      minLength: 1,
      description:
        "Topic to publish to; ${path} templates allowed. A topic that renders empty, or with + or #, dead-letters that one message. A topic that the rule's own FROM matches is refused by weir check (a loop) unless allow_loop is true.",
      examples: ['alerts/${clientid}'],
    }),
    qos: Type.Union([Type.Literal(0), Type.Literal(1), TemplateString({ minLength: 1, examples: ['${qos}'] })], {
      default: 1,
      description:
        'QoS of the republished message, or a template that renders 0 or 1 (anything else dead-letters the message). QoS 1 counts as written at its PUBACK; QoS 0 once written to the socket (no receipt: a connection lost then loses it).',
      examples: [1],
    }),
    retain: Type.Boolean({ default: false, description: 'Publish with the retain flag.', examples: [false] }),
    payload: Type.Optional(
      TemplateString({
        description:
          'Payload template. Default: the whole output record as JSON. A lone ${path} gives the value itself (bytes and strings as they are, numbers, maps and lists as JSON); a missing value dead-letters the message.',
        examples: ['${payload}', '{"device":"${clientid}","temp":${temp}}'],
      }),
    ),
    properties: Type.Optional(PropertiesSpec),
    user_properties: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), TemplateString(), {
        description: 'MQTT 5 User Properties: name → template. A property whose value is missing is left out.',
        examples: [{ rule: 'alerts', device: '${clientid}' }],
      }),
    ),
    allow_loop: Type.Boolean({
      default: false,
      description:
        "true: republishing into a topic that the rule's own FROM matches is intended (each republished message comes back to the rule: make sure its WHERE stops the loop).",
      examples: [false],
    }),
  },
  { additionalProperties: false, description: "Where and how one rule's outputs are republished." },
);
export type MqttAction = Static<typeof MqttActionSpec>;

/** What the schema cannot check: the url's scheme and port, settings that contradict each other. */
export function lintMqttConfig(cfg: MqttConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (cfg.url !== undefined) {
    const why = brokerUrlProblem(cfg.url);
    if (why) problems.push({ path: ['url'], value: cfg.url, message: why, code: 'config.invalid_url' });
  }
  if (cfg.tls && (cfg.tls.cert === undefined) !== (cfg.tls.key === undefined))
    problems.push({ path: ['tls'], message: 'cert and key go together: give both for mutual TLS, or neither', code: 'config.sink.mqtt' });
  if (cfg.url === undefined && cfg.tls !== undefined)
    problems.push({
      path: ['tls'],
      message: 'tls without url: the sink then uses broker.url with broker.tls; give a url, or remove tls',
      code: 'config.sink.mqtt',
    });
  return problems;
}
