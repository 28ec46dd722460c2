// The Pulsar sink's error codes: what each means, its class (what weir does with it) and what the
// operator should do. The sinks' section of docs/errors.md is generated from these
// (src/sinks/error-catalogue.ts composes them with the core's); PulsarError raises them and reads its
// class here.
import { type ErrorInfo, SINK_RETRIES_ACTION } from '../../error-codes.js';
import { sinkError } from '../../errors.js';

const PULSAR_DOWN = 'check that the Pulsar broker is up and reachable; weir retries meanwhile';

export const PULSAR_CODES = {
  'sink.pulsar.bad_service_url': {
    class: 'fatal',
    meaning: '`service_url` is not `pulsar://host:port` or `pulsar+ssl://host:port`',
    action: 'fix `service_url`',
  },
  'sink.pulsar.bad_topic': { class: 'fatal', meaning: '`topic` is not `persistent://tenant/namespace/topic`', action: 'fix `topic`' },
  'sink.pulsar.native_missing': {
    class: 'fatal',
    meaning: '`transport: native` without the `pulsar-client` package',
    action: 'install it as the message says, or use `transport: protocol`',
  },
  'sink.pulsar.not_connected': { class: 'retry', meaning: 'a write before the producers exist', action: SINK_RETRIES_ACTION },
  'sink.pulsar.connect_failed': { class: 'retry', meaning: 'the broker cannot be reached', action: PULSAR_DOWN },
  'sink.pulsar.connect_timeout': { class: 'retry', meaning: 'the broker does not answer CONNECT in time', action: PULSAR_DOWN },
  'sink.pulsar.connection_lost': {
    class: 'retry',
    meaning: 'the connection went away mid-write (socket closed, no answer to PING)',
    action: SINK_RETRIES_ACTION,
  },
  'sink.pulsar.closed': {
    class: 'retry',
    meaning: 'the connection or producer was closed by weir (shutdown, reconnect) with writes in flight',
    action: SINK_RETRIES_ACTION,
  },
  'sink.pulsar.producer_closed': { class: 'retry', meaning: 'the broker closed the producer (topic moved or unloaded)', action: SINK_RETRIES_ACTION },
  'sink.pulsar.producer_failed': {
    class: 'retry',
    meaning: 'the broker did not create a producer for a reason that can pass (refusals are `sink.pulsar.refused`)',
    action: SINK_RETRIES_ACTION,
  },
  'sink.pulsar.send_error': { class: 'retry', meaning: 'the broker answered a batch with SEND_ERROR', action: SINK_RETRIES_ACTION },
  'sink.pulsar.protocol_error': {
    class: 'retry',
    meaning: 'a frame weir could not read',
    action: 'weir reconnects; if it repeats, report it with the broker version',
  },
  'sink.pulsar.request_timeout': { class: 'retry', meaning: 'no answer to a lookup or producer request in time', action: SINK_RETRIES_ACTION },
  'sink.pulsar.send_timeout': { class: 'retry', meaning: 'no send receipt within `send_timeout_ms`', action: SINK_RETRIES_ACTION },
  'sink.pulsar.lookup_failed': {
    class: 'retry',
    meaning: 'topic lookup failed for a reason that can pass (refusals are `sink.pulsar.refused`)',
    action: SINK_RETRIES_ACTION,
  },
  'sink.pulsar.metadata_failed': { class: 'retry', meaning: 'the partition metadata could not be read', action: SINK_RETRIES_ACTION },
  'sink.pulsar.refused': {
    class: 'fatal',
    meaning:
      'the broker refused a lookup or producer for good: AuthenticationError, AuthorizationError, InvalidTopicName, TopicTerminatedError, NotAllowedError, IncompatibleSchema, UnsupportedVersionError',
    action: "grant the role, fix the topic or its schema, as the server's error says",
  },
  'sink.pulsar.auth_failed': { class: 'fatal', meaning: 'the broker refused the credentials at CONNECT', action: 'fix `auth_token`' },
  'sink.pulsar.tls_failed': {
    class: 'fatal',
    meaning: 'the TLS handshake failed (certificate not trusted or not matching)',
    action: "set `tls_trust_certs_file` to the broker's CA",
  },
  'sink.pulsar.tls_ca_unreadable': { class: 'fatal', meaning: 'the CA file cannot be read', action: 'fix `tls_trust_certs_file`' },
  'sink.pulsar.message_too_large': {
    class: 'reject',
    meaning: "larger than the broker's maximum message size (dead-lettered)",
    action: "raise the broker's `maxMessageSize` or make the rule's output smaller, then `weir dlq replay`",
  },
  'sink.pulsar.bad_event_time': {
    class: 'reject',
    meaning: '`event_time` rendered to something that is not a time (dead-lettered)',
    action: "fix the action's `event_time`, then `weir dlq replay`",
  },
  'sink.pulsar.admin_unreachable': { class: 'retry', meaning: 'the admin REST API cannot be reached', action: 'check `admin_url`; weir retries meanwhile' },
  'sink.pulsar.admin_unavailable': { class: 'retry', meaning: 'the admin REST API answered 5xx or 429', action: SINK_RETRIES_ACTION },
  'sink.pulsar.admin_failed': {
    class: 'fatal',
    meaning: 'the admin REST API refused the request (401, 403, 404, 409…)',
    action: 'read the HTTP status and body in the message: credentials, tenant or namespace',
  },
  'sink.pulsar.no_admin_url': { class: 'fatal', meaning: 'counting or creating a topic needs `admin_url`', action: 'set `admin_url`' },
} as const satisfies Record<string, ErrorInfo>;

export type PulsarErrorCode = keyof typeof PULSAR_CODES;

declare module '../../error-codes.js' {
  interface SinkErrorCodes extends Record<PulsarErrorCode, true> {}
}

/** An error of the Pulsar sink, with one of its codes. */
export class PulsarError extends sinkError(PULSAR_CODES) {}
