// The http (webhook) sink's settings: the single source of their names, defaults and docs. The
// TypeScript types are derived from these schemas; README.md's settings reference and sample.yaml
// are generated from them (npm run sink-docs).
import { Type, type Static } from '@sinclair/typebox';
import { TemplateString } from '../../config/common-spec.js';
import { urlProblem } from '../../config/url-check.js';
import type { SettingProblem } from '../types.js';

const TlsSpec = Type.Object(
  {
    ca_file: Type.Optional(
      Type.String({ description: "PEM file of the CA that signed the server's certificate; default: the system CAs.", examples: ['/etc/weir/ingest-ca.pem'] }),
    ),
    cert_file: Type.Optional(Type.String({ description: 'PEM client certificate, for mutual TLS.', examples: ['/etc/weir/client.pem'] })),
    key_file: Type.Optional(Type.String({ description: 'PEM private key of cert_file.', examples: ['/etc/weir/client.key'] })),
    reject_unauthorized: Type.Boolean({
      default: true,
      description: 'Refuse a server whose certificate does not verify. Turn off only for tests.',
      examples: [true],
    }),
    servername: Type.Optional(
      Type.String({ description: 'TLS SNI / certificate name to check when it differs from the URL host.', examples: ['ingest.internal'] }),
    ),
  },
  { additionalProperties: false, description: 'TLS options for https:// URLs.', examples: [{ ca_file: '/etc/weir/ingest-ca.pem' }] },
);

export const HttpConfigSpec = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      description:
        "The endpoint (http:// or https://) that actions without a url of their own send to, and that the readiness probe connects to. Fixed here, since weir.yaml's ${…} are environment variables; an action's url is a template.",
      examples: ['https://ingest.example.com/v1/telemetry'],
    }),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String(), {
        description: "Headers sent with every request of this sink; the place for secrets, from ${ENV} variables. An action's headers of the same name win.",
        examples: [{ Authorization: 'Bearer ${INGEST_TOKEN}' }],
      }),
    ),
    timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 600_000,
      default: 10_000,
      description: 'How long a request may take, from sending to the end of the response; then it is retried.',
      examples: [10_000],
    }),
    max_connections: Type.Integer({ minimum: 1, maximum: 1024, default: 16, description: 'Keep-alive connections per host (the pool).', examples: [16] }),
    max_in_flight_requests: Type.Integer({
      minimum: 1,
      maximum: 4096,
      default: 32,
      description: 'Requests waiting for their response at once, across all writes of this sink.',
      examples: [32],
    }),
    max_retry_after_ms: Type.Integer({
      minimum: 0,
      maximum: 3_600_000,
      default: 60_000,
      description: 'The longest Retry-After (of a 429 or 503) that is honoured; a longer one is cut to this.',
      examples: [60_000],
    }),
    tls: Type.Optional(TlsSpec),
  },
  { additionalProperties: false, description: 'An HTTP endpoint that rule outputs are sent to.' },
);
export type HttpConfig = Static<typeof HttpConfigSpec>;

export const FORMATS = ['message', 'json_array', 'json_lines'] as const;
export type BodyFormat = (typeof FORMATS)[number];

export const HttpActionSpec = Type.Object(
  {
    url: Type.Optional(
      TemplateString({
        description:
          "URL to send to; ${path} templates allowed. Default: the sink's url. A URL that does not render as http:// or https:// dead-letters the message.",
        examples: ['https://ingest.example.com/v1/devices/${clientid}'],
      }),
    ),
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH')], {
      default: 'POST',
      description: 'HTTP method.',
      examples: ['POST'],
    }),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), TemplateString(), {
        description:
          'Headers: name → template. A header whose value is missing is left out. Content-Type defaults to application/json (application/x-ndjson for json_lines).',
        examples: [{ 'X-Device': '${clientid}' }],
      }),
    ),
    body: Type.Optional(
      TemplateString({
        description:
          'Body of one message (its element, in a batch). Default: the whole output record as JSON. A lone ${path} gives the value itself; a missing value dead-letters the message.',
        examples: ['{"device":"${clientid}","temp":${temp}}'],
      }),
    ),
    format: Type.Union(
      FORMATS.map((f) => Type.Literal(f)),
      {
        default: 'message',
        description:
          "message: one request per message. json_array: one request per batch (per URL and headers), its body a JSON array of the messages' bodies. json_lines: the same, one body per line. A batch the server refuses with a 4xx is split until the refused messages stand alone.",
        examples: ['json_array'],
      },
    ),
  },
  { additionalProperties: false, description: "Where and how one rule's outputs are sent." },
);
export type HttpAction = Static<typeof HttpActionSpec>;

/** What the schema cannot check: the URL, cert without key. */
export function lintHttpConfig(cfg: HttpConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const why = urlProblem(cfg.url, { schemes: ['http:', 'https:'], expected: 'http:// or https://', example: 'https://ingest.example.com/v1/telemetry' });
  if (why) problems.push({ path: ['url'], value: cfg.url, message: why, code: 'config.invalid_url' });
  if (cfg.tls && (cfg.tls.cert_file === undefined) !== (cfg.tls.key_file === undefined))
    problems.push({ path: ['tls'], message: 'cert_file and key_file go together: give both for mutual TLS, or neither', code: 'config.sink.http' });
  return problems;
}
