// A Pulsar sink's dead_letter_topic as src/dead-letters/topic-store.ts needs it: records sent by
// the protocol transport (key = the message key, a tombstone = an empty payload, which is what
// Pulsar's compaction deletes a key by), and read back through the admin REST API.
//
// What keeps the letters is a durable subscription, LETTER_SUBSCRIPTION, made from the earliest
// message before the first letter is sent and never acknowledged: the topic's messages are its
// backlog, kept whatever the namespace's retention (a topic without subscriptions may lose them).
// A read peeks the backlog entry by entry (GET …/subscription/<name>/position/<n>) up to the
// backlog's size at the start, so it costs one HTTP request per record ever written: marks and
// tombstones add records, and since the subscription never acknowledges, neither they nor what
// they replace are ever dropped. That is this store's limit: for many letters, PostgreSQL or
// Kafka (a compacted topic) stay small where this grows (docs/operations.md).
//
// Sends are uncompressed and unbatched (one message per entry): the peek returns an entry's bytes
// as stored, and a compressed batch would need decompressing here.
import type { LetterTopic, TopicRecord } from '../../dead-letters/topic-store.js';
import { PulsarError } from './errors.js';
import type { Logger } from '../../log.js';
import { KeptAttempt } from '../kept-attempt.js';
import type { ErrorClass } from '../types.js';
import { ensureSubscription, peekEntry, subscriptionBacklog, type AdminOptions } from './admin.js';
import { classifyPulsarError } from './classify.js';
import { decodeProto } from './protocol/proto-reader.js';
import { ProtocolTransport } from './protocol/client.js';
import { readCa } from './read-ca.js';
import type { PulsarConfig } from './spec.js';
import type { PulsarTransport } from './transport.js';

/** The subscription whose backlog keeps the letters. */
export const LETTER_SUBSCRIPTION = 'weir-dead-letters';
/** Peek requests in flight during a read. */
const PEEKS_AT_ONCE = 8;

export class PulsarLetterTopic implements LetterTopic {
  readonly where: string;
  private readonly admin: AdminOptions;
  private readonly transport = new KeptAttempt(() => this.open());

  constructor(
    private readonly cfg: PulsarConfig,
    private readonly topic: string,
    sinkName: string,
    private readonly log: Logger,
  ) {
    this.where = `topic ${topic} of sink ${sinkName}`;
    if (!cfg.admin_url) throw new PulsarError('sink.pulsar.no_admin_url', `sinks.${sinkName}: dead_letter_topic needs admin_url`);
    this.admin = { adminUrl: cfg.admin_url, authToken: cfg.auth_token, timeoutMs: cfg.connect_timeout_ms };
  }

  async append(records: readonly TopicRecord[]): Promise<void> {
    const t = await this.transport.get();
    // One producer, one message per entry: the broker stores them in the order sent.
    const failures = await Promise.all(
      records.map((r) => new Promise<Error | undefined>((resolve) => t.send({ key: r.key, payload: r.value ?? Buffer.alloc(0) }, resolve))),
    );
    const failed = failures.find((e) => e !== undefined);
    if (failed) {
      await this.reset();
      throw failed;
    }
  }

  async readAll(): Promise<TopicRecord[]> {
    const backlog = await subscriptionBacklog(this.admin, this.topic, LETTER_SUBSCRIPTION);
    const entries: Array<TopicRecord[] | undefined> = new Array(backlog);
    let next = 1;
    const worker = async () => {
      for (let pos = next++; pos <= backlog; pos = next++) {
        const entry = await peekEntry(this.admin, this.topic, LETTER_SUBSCRIPTION, pos);
        entries[pos - 1] = entry ? recordsOf(entry.headers, entry.body) : [];
      }
    };
    await Promise.all(Array.from({ length: Math.min(PEEKS_AT_ONCE, backlog) }, worker));
    return entries.flatMap((e) => e ?? []);
  }

  classify(err: unknown): ErrorClass {
    return classifyPulsarError(err);
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private async open(): Promise<PulsarTransport> {
    // Before the first letter: from then on the subscription's backlog keeps every one.
    await ensureSubscription(this.admin, this.topic, LETTER_SUBSCRIPTION);
    const t = new ProtocolTransport(
      {
        serviceUrl: this.cfg.service_url,
        topic: this.topic,
        compression: 'none',
        maxMessages: 1,
        maxBytes: this.cfg.batching.max_bytes,
        maxDelayMs: 0,
        maxPending: 1000,
        sendTimeoutMs: this.cfg.send_timeout_ms,
        connectTimeoutMs: this.cfg.connect_timeout_ms,
        hashingScheme: this.cfg.hashing_scheme,
        authToken: this.cfg.auth_token,
        tlsCa: readCa(this.cfg.tls_trust_certs_file),
        tlsVerify: this.cfg.tls_verify !== 'none',
      },
      this.log,
    );
    try {
      await t.connect(AbortSignal.timeout(this.cfg.connect_timeout_ms));
    } catch (err) {
      await t.close().catch(() => undefined);
      throw err;
    }
    return t;
  }

  private async reset(): Promise<void> {
    const t = await this.transport.forget()?.catch(() => undefined);
    await t?.close();
  }
}

/**
 * The messages of one peeked entry. The broker answers with the entry's payload and its metadata
 * in X-Pulsar-* headers; a batch (what the protocol transport always sends, here of one message)
 * is `[u32 size][SingleMessageMetadata][payload]` per message, partition_key = field 2,
 * payload_size = 3, null_value = 9.
 */
function recordsOf(headers: Headers, body: Buffer): TopicRecord[] {
  const compression = headers.get('X-Pulsar-compression');
  // Not written by weir (which sends uncompressed): kept as an unreadable record, not guessed at.
  if (compression && compression !== 'NONE') return [{ key: '', value: body }];
  const batch = headers.get('X-Pulsar-num-batch-message');
  if (batch === null) {
    const nullValue = headers.get('X-Pulsar-null-value') === 'true';
    return [{ key: headers.get('X-Pulsar-partition-key') ?? '', value: nullValue || body.length === 0 ? null : body }];
  }
  const out: TopicRecord[] = [];
  let pos = 0;
  for (let i = 0; i < Number(batch) && pos + 4 <= body.length; i++) {
    const size = body.readUInt32BE(pos);
    const meta = decodeProto(body.subarray(pos + 4, pos + 4 + size));
    pos += 4 + size;
    const payload = body.subarray(pos, pos + meta.uint(3));
    pos += payload.length;
    out.push({ key: meta.string(2), value: meta.bool(9) || payload.length === 0 ? null : payload });
  }
  return out;
}
