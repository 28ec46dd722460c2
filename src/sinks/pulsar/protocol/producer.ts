// One producer on one partition (or on a non-partitioned topic): collects messages into Pulsar
// batches (count, bytes, delay), sends each batch as one SEND with consecutive sequence ids, and
// settles each message when the broker's SEND_RECEIPT for its batch arrives. A lost connection
// fails every batch in flight with a retriable error; the next flush re-creates the producer.
import type { WeirError } from '../../../errors.js';
import { PulsarError } from '../errors.js';
import { serverError } from '../classify.js';
import { encodeCloseProducer, encodeProducer, encodeSend } from './commands.js';
import { compressBatch, compressionCode, type ProtocolCompression } from './compression.js';
import type { PulsarConnection, ProducerListener } from './connection.js';
import type { PendingSend } from '../transport.js';
import { payloadFrame } from './frame.js';
import { encodeBatch, encodeMessageMetadata } from './metadata.js';

export interface ProducerOptions {
  readonly compression: ProtocolCompression;
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly maxDelayMs: number;
  readonly sendTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly producerName?: string | undefined;
}

interface InFlight {
  readonly items: PendingSend[];
  readonly timer: NodeJS.Timeout;
}

/** Frame overhead allowance under the broker's max message size (command, metadata). */
const FRAME_SLACK = 16 * 1024;

export class PartitionProducer implements ProducerListener {
  private conn: PulsarConnection | undefined;
  private producerId = 0;
  private producerName = '';
  private sequenceId = 0;
  private queue: PendingSend[] = [];
  private queueBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiting: PendingSend[][] = [];
  private opening: Promise<void> | undefined;
  private readonly inflight = new Map<number, InFlight>();
  private closing = false;
  private writeChain: Promise<void> = Promise.resolve();

  constructor(
    readonly topic: string,
    private readonly opts: ProducerOptions,
    private readonly connectionFor: (topic: string) => Promise<PulsarConnection>,
  ) {}

  /** Creates the producer on the broker now (connect-time check), instead of on the first send. */
  async open(): Promise<void> {
    if (this.conn && !this.conn.closed) return;
    this.opening ??= this.create().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async create(): Promise<void> {
    const conn = await this.connectionFor(this.topic);
    const id = conn.registerProducer(this);
    const reply = await conn
      .request((rid) => encodeProducer(this.topic, id, rid, this.opts.producerName), this.opts.requestTimeoutMs, `create producer on ${this.topic}`)
      .catch((err: unknown) => {
        conn.unregisterProducer(id);
        throw err;
      });
    if (reply.type !== 'producer_success') {
      conn.unregisterProducer(id);
      const e = reply.type === 'error' ? reply : { error: 'UnexpectedReply', message: reply.type };
      throw serverError('sink.pulsar.producer_failed', `cannot create a producer on ${this.topic}: ${e.error}: ${e.message}`, e.error);
    }
    this.conn = conn;
    this.producerId = id;
    this.producerName = reply.producerName;
  }

  /** Queues one message; it is settled when the broker has stored it, or with why not. */
  send(p: PendingSend): void {
    if (this.closing) return p.settle(new PulsarError('sink.pulsar.closed', 'producer closed'));
    const msg = p.msg;
    // A batch stays within max_bytes unless one message alone is larger, so a batch of
    // messages that each fit never outgrows the broker's frame limit.
    if (this.queue.length > 0 && this.queueBytes + msg.payload.length > this.opts.maxBytes) this.flush();
    this.queue.push(p);
    this.queueBytes += msg.payload.length;
    if (this.queue.length >= this.opts.maxMessages || this.queueBytes >= this.opts.maxBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.opts.maxDelayMs);
  }

  /** Sends what is queued now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.queueBytes = 0;
    if (this.conn && !this.conn.closed && this.waiting.length === 0) {
      this.sendBatch(this.conn, batch);
      return;
    }
    // Not connected: keep the batches in order until the producer exists again.
    this.waiting.push(batch);
    if (this.waiting.length > 1) return;
    this.open().then(
      () => {
        const batches = this.waiting;
        this.waiting = [];
        // The connection can close between the producer's creation and this callback (a broker
        // going down as weir reconnects): the batches then fail now and are retried, instead of
        // being dropped from every list by a TypeError and never settling.
        const conn = this.conn;
        if (!conn || conn.closed) {
          const err = new PulsarError('sink.pulsar.connection_lost', `Pulsar connection for ${this.topic} lost before the batch was sent`);
          for (const b of batches) for (const p of b) p.settle(err);
          return;
        }
        for (const b of batches) this.sendBatch(conn, b);
      },
      (err: Error) => {
        const batches = this.waiting;
        this.waiting = [];
        for (const b of batches) for (const p of b) p.settle(err);
      },
    );
  }

  private sendBatch(conn: PulsarConnection, batch: PendingSend[]): void {
    const limit = conn.maxMessageSize - FRAME_SLACK;
    const items = batch.filter((p) => {
      if (p.msg.payload.length <= limit) return true;
      p.settle(
        new PulsarError('sink.pulsar.message_too_large', `message of ${p.msg.payload.length} bytes exceeds the broker's limit of ${conn.maxMessageSize}`),
      );
      return false;
    });
    if (items.length === 0) return;
    const first = this.sequenceId;
    const last = first + items.length - 1;
    this.sequenceId = last + 1;
    const raw = encodeBatch(
      items.map((p) => p.msg),
      first,
    );
    const timer = setTimeout(() => {
      conn.destroy(new PulsarError('sink.pulsar.send_timeout', `no send receipt from ${conn.address} for ${this.topic} within ${this.opts.sendTimeoutMs} ms`));
    }, this.opts.sendTimeoutMs);
    const entry: InFlight = { items, timer };
    this.inflight.set(first, entry);
    // Compression runs on libuv's thread pool where the codec allows (compression.ts), off the event
    // loop that also serves ingest and the rules; frames are still written in sequence-id order
    // through writeChain.
    const { producerId, producerName } = this;
    const publishTime = Date.now();
    const framed = compressBatch(this.opts.compression, raw).then((payload) =>
      payloadFrame(
        encodeSend(producerId, first, items.length, last),
        encodeMessageMetadata({
          producerName,
          sequenceId: first,
          publishTime,
          compression: compressionCode(this.opts.compression),
          uncompressedSize: raw.length,
          numMessagesInBatch: items.length,
          highestSequenceId: last,
        }),
        payload,
      ),
    );
    this.writeChain = this.writeChain
      .then(() => framed)
      .then((frame) => {
        // A batch failed meanwhile (connection lost) is not written to a newer connection.
        if (this.inflight.get(first) === entry) conn.write(frame);
      })
      .catch((err: Error) => {
        if (this.inflight.get(first) === entry) this.failInflight(err);
      });
  }

  onReceipt(sequenceId: number): void {
    const b = this.inflight.get(sequenceId);
    if (!b) return;
    this.inflight.delete(sequenceId);
    clearTimeout(b.timer);
    for (const p of b.items) p.settle();
  }

  onSendError(sequenceId: number, error: WeirError): void {
    // The Java client treats any SEND_ERROR but a checksum mismatch as fatal for the connection;
    // dropping it fails every later batch too, so a retry cannot overtake an earlier message.
    const b = this.inflight.get(sequenceId);
    if (b) {
      this.inflight.delete(sequenceId);
      clearTimeout(b.timer);
      for (const p of b.items) p.settle(error);
    }
    this.conn?.destroy(error);
  }

  onClosed(error: WeirError): void {
    this.conn = undefined;
    this.failInflight(error);
  }

  private failInflight(err: Error): void {
    const batches = [...this.inflight.values()];
    this.inflight.clear();
    for (const b of batches) {
      clearTimeout(b.timer);
      for (const p of b.items) p.settle(err);
    }
  }

  /** Messages queued or awaiting a receipt. */
  get pending(): number {
    let n = this.queue.length;
    for (const b of this.inflight.values()) n += b.items.length;
    for (const b of this.waiting) n += b.length;
    return n;
  }

  /** Flushes, waits (bounded) for outstanding receipts, then closes the producer on the broker. */
  async close(timeoutMs: number): Promise<void> {
    this.flush();
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    this.closing = true;
    const conn = this.conn;
    this.conn = undefined;
    this.failInflight(new PulsarError('sink.pulsar.closed', 'producer closed before its receipt arrived'));
    if (!conn || conn.closed) return;
    conn.unregisterProducer(this.producerId);
    await conn.request((rid) => encodeCloseProducer(this.producerId, rid), Math.min(timeoutMs, 5_000), 'close producer').catch(() => undefined);
  }
}
