// The `native` transport: the official pulsar-client package, loaded on connect. The C++ client
// routes, batches and compresses; weir bounds pending sends the same way as the protocol transport.
import { toError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import type { PulsarConfig } from '../spec.js';
import { PendingLimit, type OutgoingMessage, type PulsarTransport, type SendDone } from '../transport.js';
import { notConnected } from '../classify.js';
import { loadPulsarClient, type NativeClient, type NativeMessage, type NativeProducer, type PulsarClientModule } from './module.js';
import { nativeClientConfig, nativeProducerConfig } from './options.js';

export class NativeTransport implements PulsarTransport {
  readonly kind = 'native';
  private client: NativeClient | undefined;
  private producer: NativeProducer | undefined;
  private readonly limit: PendingLimit;
  partitions = 0;

  constructor(
    private readonly cfg: PulsarConfig,
    private readonly log: Logger,
    private readonly load: () => Promise<PulsarClientModule> = () => loadPulsarClient(),
  ) {
    this.limit = new PendingLimit(cfg.max_pending, (p) => {
      const producer = this.producer;
      if (!producer) return p.settle(notConnected());
      producer.send(NativeTransport.toNativeMessage(p.msg)).then(
        () => p.settle(),
        (err: unknown) => p.settle(toError(err)),
      );
    });
  }

  async connect(_signal: AbortSignal): Promise<void> {
    if (this.producer) return;
    const mod = await this.load();
    this.client ??= new mod.Client(nativeClientConfig(this.cfg, mod));
    const topics = await this.client.getPartitionsForTopic(this.cfg.topic);
    this.partitions = topics.length > 1 || topics[0] !== this.cfg.topic ? topics.length : 0;
    this.producer = await this.client.createProducer(nativeProducerConfig(this.cfg));
    this.log.debug({ topic: this.cfg.topic, partitions: this.partitions }, 'pulsar native producer created');
  }

  static toNativeMessage(msg: OutgoingMessage): NativeMessage {
    const out: NativeMessage = { data: msg.payload };
    if (msg.key !== undefined) out.partitionKey = msg.key;
    if (msg.properties) out.properties = { ...msg.properties };
    if (msg.eventTime) out.eventTimestamp = msg.eventTime;
    return out;
  }

  send(msg: OutgoingMessage, done: SendDone): void {
    if (!this.producer) return done(notConnected());
    this.limit.send(msg, done);
  }

  async probe(_signal: AbortSignal): Promise<void> {
    if (!this.client) throw notConnected();
    await this.client.getPartitionsForTopic(this.cfg.topic);
  }

  async close(): Promise<void> {
    await this.producer?.flush().catch(() => undefined);
    await this.producer?.close().catch(() => undefined);
    await this.client?.close().catch(() => undefined);
    this.producer = undefined;
    this.client = undefined;
  }
}
