// What the sink needs from a way of talking to Pulsar. Both transports (the TypeScript binary
// protocol and the native pulsar-client) route, batch, compress and bound pending sends the same
// way; the sink above them only encodes messages and reports outcomes.
import type { SingleMessage } from './protocol/metadata.js';

export type OutgoingMessage = SingleMessage;

export interface PulsarTransport {
  readonly kind: 'protocol' | 'native';
  /** Connects and creates the producers; throws a WeirError (retriable or not). */
  connect(signal: AbortSignal): Promise<void>;
  /** Resolves when the broker's receipt for this message arrived; waits while max_pending messages are outstanding. */
  send(msg: OutgoingMessage): Promise<void>;
  /** Throws when the broker cannot be reached now. */
  probe(signal: AbortSignal): Promise<void>;
  /** Partitions of the topic (0 = not partitioned), known after connect. */
  readonly partitions: number;
  close(): Promise<void>;
}

/** A counting semaphore for max_pending: send() waits while that many messages are outstanding. */
export class PendingLimit {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly max: number) {}

  acquire(): Promise<void> | undefined {
    if (this.used < this.max) {
      this.used++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /**
   * Calls `send` once there is room and frees the room when its promise settles; returns that
   * promise. One reaction per message instead of `.finally`'s chain of three: this runs for every
   * message the sink sends.
   */
  run(send: () => Promise<void>): Promise<void> {
    const wait = this.acquire();
    return wait ? wait.then(() => this.start(send)) : this.start(send);
  }

  private start(send: () => Promise<void>): Promise<void> {
    let sent: Promise<void>;
    try {
      sent = send();
    } catch (err) {
      this.release();
      return Promise.reject(err);
    }
    sent.then(this.onSettled, this.onSettled);
    return sent;
  }

  private readonly onSettled = (): void => this.release();

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used--;
  }

  get outstanding(): number {
    return this.used;
  }
}
