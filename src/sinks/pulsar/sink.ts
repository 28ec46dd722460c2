// The Pulsar sink driver: creates the partitioned topic when asked to, opens the chosen transport,
// and writes a batch as individual sends that resolve on the broker's receipts. Items whose send
// failed are reported per item (retry or reject), so one lost connection does not re-send what
// the broker already acknowledged.
import { PulsarError } from './errors.js';
import { redactUrl } from '../../log.js';
import { letterRecords } from '../../dead-letters/topic-store.js';
import type { DeadLetter } from '../../dead-letters/letter.js';
import type { BoundAction, ErrorClass, Sink, SinkDeps, WriteResult } from '../types.js';
import { ALL_WRITTEN } from '../types.js';
import { ensurePartitionedTopic } from './admin.js';
import { classifyPulsarError, notConnected } from './classify.js';
import { compileEncoder, describeMessage } from './encode.js';
import { PulsarLetterTopic } from './letter-topic.js';
import { NativeTransport } from './native/native-transport.js';
import { ProtocolTransport } from './protocol/client.js';
import { readCa } from './read-ca.js';
import { parseServiceUrl } from './service-url.js';
import type { PulsarAction, PulsarConfig } from './spec.js';
import type { OutgoingMessage, PulsarTransport } from './transport.js';

export type TransportFactory = (cfg: PulsarConfig, deps: SinkDeps) => PulsarTransport;

export const defaultTransport: TransportFactory = (cfg, deps) =>
  cfg.transport === 'native'
    ? new NativeTransport(cfg, deps.log)
    : new ProtocolTransport(
        {
          serviceUrl: cfg.service_url,
          topic: cfg.topic,
          compression: cfg.compression,
          maxMessages: cfg.batching.max_messages,
          maxBytes: cfg.batching.max_bytes,
          maxDelayMs: cfg.batching.max_delay_ms,
          maxPending: cfg.max_pending,
          sendTimeoutMs: cfg.send_timeout_ms,
          connectTimeoutMs: cfg.connect_timeout_ms,
          hashingScheme: cfg.hashing_scheme,
          authToken: cfg.auth_token,
          producerName: cfg.producer_name,
          tlsCa: readCa(cfg.tls_trust_certs_file),
          tlsVerify: cfg.tls_verify !== 'none',
        },
        deps.log,
      );

export class PulsarSink implements Sink<PulsarAction, OutgoingMessage> {
  private transport: PulsarTransport | undefined;
  /** The dead_letter_topic's writer, when the sink keeps dead letters (else no deadLetter: the core looks elsewhere). */
  private readonly letters: PulsarLetterTopic | undefined;
  readonly deadLetter?: (letters: DeadLetter[], signal: AbortSignal) => Promise<void>;

  constructor(
    private readonly cfg: PulsarConfig,
    private readonly deps: SinkDeps,
    private readonly makeTransport: TransportFactory = defaultTransport,
  ) {
    if (cfg.create_topic === 'if_missing' && !cfg.admin_url) {
      throw new PulsarError('sink.pulsar.no_admin_url', `sinks.${deps.name}: create_topic: if_missing needs admin_url`);
    }
    if (cfg.transport === 'protocol') {
      // A service URL the protocol transport cannot use fails at start-up, not on every connect.
      parseServiceUrl(cfg.service_url);
    }
    if (cfg.dead_letter_topic) {
      const topic = new PulsarLetterTopic(cfg, cfg.dead_letter_topic, deps.name, deps.log.child({ sink: deps.name }));
      this.letters = topic;
      this.deadLetter = (letters) => topic.append(letterRecords(letters));
    }
  }

  bind(action: PulsarAction): BoundAction<OutgoingMessage> {
    // Every action of a Pulsar sink writes its one topic, and each message carries its own key,
    // properties and event time: one batch stream for them all.
    return { batchKey: 'topic', encode: compileEncoder(action), describe: describeMessage };
  }

  async connect(signal: AbortSignal): Promise<void> {
    if (this.cfg.create_topic === 'if_missing') {
      const n = await ensurePartitionedTopic(
        { adminUrl: this.cfg.admin_url!, authToken: this.cfg.auth_token, timeoutMs: this.cfg.connect_timeout_ms },
        this.cfg.topic,
        this.cfg.partitions,
        signal,
      );
      if (n !== this.cfg.partitions)
        this.deps.log.warn(
          { topic: this.cfg.topic, partitions: n, configured: this.cfg.partitions },
          'pulsar topic exists with another partition count; using it',
        );
    }
    this.transport ??= this.makeTransport(this.cfg, this.deps);
    await this.transport.connect(signal);
    this.deps.log.info(
      {
        sink: this.deps.name,
        service_url: redactUrl(this.cfg.service_url),
        topic: this.cfg.topic,
        partitions: this.transport.partitions,
        transport: this.transport.kind,
      },
      'pulsar sink connected',
    );
  }

  async write(items: OutgoingMessage[], _signal: AbortSignal): Promise<WriteResult> {
    const t = this.transport;
    if (!t) throw notConnected();
    const failures = await sendAll(t, items);
    if (!failures) return ALL_WRITTEN;
    let rejected: Array<{ index: number; error: Error }> | undefined;
    let retry: number[] | undefined;
    let retryError: Error | undefined;
    for (let i = 0; i < failures.length; i++) {
      const err = failures[i];
      if (!err) continue;
      if (this.classify(err) === 'reject') (rejected ??= []).push({ index: i, error: err });
      else {
        (retry ??= []).push(i);
        retryError ??= err;
      }
    }
    return retryError ? { rejected: rejected ?? [], retry: retry ?? [], retryError } : { rejected: rejected ?? [], retry: retry ?? [] };
  }

  async probe(signal: AbortSignal): Promise<void> {
    if (!this.transport) throw notConnected();
    await this.transport.probe(signal);
  }

  classify(err: unknown): ErrorClass {
    return classifyPulsarError(err);
  }

  async close(): Promise<void> {
    const t = this.transport;
    this.transport = undefined;
    await Promise.all([t?.close(), this.letters?.close()]);
  }
}

/**
 * Sends every item; resolves once each has its outcome, with each failed item's error at its
 * index (undefined when none failed), so retries keep the batch's order.
 */
function sendAll(t: PulsarTransport, items: OutgoingMessage[]): Promise<Array<Error | undefined> | undefined> {
  return new Promise((resolve) => {
    let left = items.length;
    let failures: Array<Error | undefined> | undefined;
    if (left === 0) return resolve(undefined);
    for (let i = 0; i < items.length; i++) {
      t.send(items[i]!, (err) => {
        if (err) (failures ??= new Array<Error | undefined>(items.length))[i] = err;
        if (--left === 0) resolve(failures);
      });
    }
  });
}
