// The `protocol` transport: Pulsar's binary protocol spoken from TypeScript. It asks the broker
// for the topic's partitions, looks each partition up (following redirects), creates one producer
// per partition and routes messages to them as the Java client would (routing.ts).
import { PulsarError } from '../errors.js';
import { notConnected, serverError } from '../classify.js';
import type { Logger } from '../../../log.js';
import { PartitionRouter, type HashingScheme } from '../routing.js';
import { parseServiceUrl } from '../service-url.js';
import { PendingLimit, type OutgoingMessage, type PendingSend, type PulsarTransport, type SendDone } from '../transport.js';
import { encodeLookup, encodePartitionedMetadata } from './commands.js';
import { loadCompressor, type ProtocolCompression } from './compression.js';
import { PulsarConnection } from './connection.js';
import { PartitionProducer } from './producer.js';

export interface ProtocolTransportOptions {
  readonly serviceUrl: string;
  readonly topic: string;
  readonly compression: ProtocolCompression;
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly maxDelayMs: number;
  readonly maxPending: number;
  readonly sendTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly hashingScheme: HashingScheme;
  readonly authToken?: string | undefined;
  readonly producerName?: string | undefined;
  /** PEM CA bundle for pulsar+ssl:// (default: Node's trusted CAs). */
  readonly tlsCa?: Buffer | undefined;
  /** false = accept any certificate (tls_verify: none). */
  readonly tlsVerify?: boolean;
}

const CLIENT_VERSION = 'weir-protocol/0.1';
const MAX_REDIRECTS = 8;

export class ProtocolTransport implements PulsarTransport {
  readonly kind = 'protocol';
  private readonly slots = new Map<string, { conn?: PulsarConnection; opening?: Promise<PulsarConnection> }>();
  private producers: PartitionProducer[] = [];
  private router: PartitionRouter | undefined;
  private readonly limit: PendingLimit;
  private readonly service: { host: string; port: number; tls: boolean };
  partitions = 0;

  constructor(
    private readonly opts: ProtocolTransportOptions,
    private readonly log: Logger,
  ) {
    this.service = parseServiceUrl(opts.serviceUrl);
    this.limit = new PendingLimit(opts.maxPending, (p) => this.route(p));
  }

  /** The open connection to host:port, or one attempt to open it that concurrent callers share. */
  private connection(host: string, port: number): Promise<PulsarConnection> {
    const key = `${host}:${port}`;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {};
      this.slots.set(key, slot);
    }
    if (slot.conn && !slot.conn.closed) return Promise.resolve(slot.conn);
    const s = slot;
    s.opening ??= PulsarConnection.open({
      host,
      port,
      timeoutMs: this.opts.connectTimeoutMs,
      authToken: this.opts.authToken,
      clientVersion: CLIENT_VERSION,
      tls: this.service.tls ? { ca: this.opts.tlsCa, verify: this.opts.tlsVerify ?? true } : undefined,
    })
      .then((c) => {
        s.conn = c;
        this.log.debug({ broker: key, server: c.serverVersion }, 'pulsar connected');
        return c;
      })
      .finally(() => {
        s.opening = undefined;
      });
    return s.opening;
  }

  private serviceConnection(): Promise<PulsarConnection> {
    return this.connection(this.service.host, this.service.port);
  }

  /** LOOKUP of one topic: the connection to the broker that owns it. */
  private async connectionFor(topic: string): Promise<PulsarConnection> {
    let conn = await this.serviceConnection();
    let authoritative = false;
    for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
      const r = await conn.request((rid) => encodeLookup(topic, rid, authoritative), this.opts.connectTimeoutMs, `lookup ${topic}`);
      if (r.type !== 'lookup') throw new PulsarError('sink.pulsar.lookup_failed', `lookup ${topic}: unexpected ${r.type}`);
      if (r.kind === 'failed') {
        throw serverError('sink.pulsar.lookup_failed', `lookup ${topic}: ${r.error}: ${r.message}`, r.error);
      }
      if (r.proxyThroughServiceUrl) return this.serviceConnection();
      // Over TLS the owner's pulsar+ssl:// address, else its plain one.
      const target = parseServiceUrl(this.service.tls ? r.brokerServiceUrlTls : r.brokerServiceUrl);
      conn = await this.connection(target.host, target.port);
      if (r.kind === 'connect') return conn;
      authoritative = r.authoritative;
    }
    throw new PulsarError('sink.pulsar.lookup_failed', `lookup ${topic}: more than ${MAX_REDIRECTS} redirects`);
  }

  async connect(_signal: AbortSignal): Promise<void> {
    await loadCompressor(this.opts.compression);
    const conn = await this.serviceConnection();
    const r = await conn.request((rid) => encodePartitionedMetadata(this.opts.topic, rid), this.opts.connectTimeoutMs, `partitions of ${this.opts.topic}`);
    if (r.type !== 'partitioned_metadata' || r.failed) {
      const why = r.type === 'partitioned_metadata' ? `${r.error}: ${r.message}` : r.type;
      throw new PulsarError('sink.pulsar.metadata_failed', `cannot read the partitions of ${this.opts.topic}: ${why}`);
    }
    if (this.producers.length === 0 || r.partitions !== this.partitions) {
      this.partitions = r.partitions;
      const topics = r.partitions === 0 ? [this.opts.topic] : Array.from({ length: r.partitions }, (_, i) => `${this.opts.topic}-partition-${i}`);
      const po = {
        compression: this.opts.compression,
        maxMessages: this.opts.maxMessages,
        maxBytes: this.opts.maxBytes,
        maxDelayMs: this.opts.maxDelayMs,
        sendTimeoutMs: this.opts.sendTimeoutMs,
        requestTimeoutMs: this.opts.connectTimeoutMs,
        producerName: this.opts.producerName,
      };
      this.producers = topics.map((t) => new PartitionProducer(t, po, (topic) => this.connectionFor(topic)));
      this.router = new PartitionRouter(Math.max(1, r.partitions), this.opts.hashingScheme);
    }
    await Promise.all(this.producers.map((p) => p.open()));
  }

  send(msg: OutgoingMessage, done: SendDone): void {
    if (!this.router) return done(notConnected());
    this.limit.send(msg, done);
  }

  /** Hands a send that has its max_pending room to its partition's producer. */
  private route(p: PendingSend): void {
    this.producers[this.router!.choose(p.msg.key)]!.send(p);
  }

  async probe(_signal: AbortSignal): Promise<void> {
    const conn = await this.serviceConnection();
    if (conn.closed) throw new PulsarError('sink.pulsar.connection_lost', 'Pulsar connection lost');
  }

  async close(): Promise<void> {
    await Promise.all(this.producers.map((p) => p.close(5_000)));
    for (const slot of this.slots.values()) {
      slot.conn?.destroy();
      await slot.opening?.then(
        (c) => c.destroy(),
        () => undefined,
      );
    }
    this.slots.clear();
  }
}
