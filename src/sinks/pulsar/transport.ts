// What the sink needs from a way of talking to Pulsar. Both transports (the TypeScript binary
// protocol and the native pulsar-client) route, batch, compress and bound pending sends the same
// way; the sink above them only encodes messages and reports outcomes.
import { toError } from '../../errors.js';
import type { SingleMessage } from './protocol/metadata.js';

export type OutgoingMessage = SingleMessage;

/**
 * Told once per message: with nothing when the broker's receipt for it arrived, else with why it
 * was not stored. A callback, not a promise: the sink sends every message of every batch, and a
 * promise per message (with the reactions that wait on it) was garbage the collector had to copy
 * while the message waited for its receipt.
 */
export type SendDone = (err?: Error) => void;

export interface PulsarTransport {
  readonly kind: 'protocol' | 'native';
  /** Connects and creates the producers; throws a WeirError (retriable or not). */
  connect(signal: AbortSignal): Promise<void>;
  /** Sends one message; `done` is called once, possibly before send() returns. Waits while max_pending messages are outstanding. */
  send(msg: OutgoingMessage, done: SendDone): void;
  /** Throws when the broker cannot be reached now. */
  probe(signal: AbortSignal): Promise<void>;
  /** Partitions of the topic (0 = not partitioned), known after connect. */
  readonly partitions: number;
  close(): Promise<void>;
}

/** A counting semaphore for max_pending: a send waits while that many messages are outstanding. */
export class PendingLimit {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /**
   * Calls `send` once there is room, and `done` with its outcome once (a second call from `send`
   * is ignored); the room is free again before `done` runs. A send that throws counts as failed.
   */
  run(send: (done: SendDone) => void, done: SendDone): void {
    if (this.used < this.max) {
      this.used++;
      this.start(send, done);
    } else {
      this.waiters.push(() => this.start(send, done));
    }
  }

  private start(send: (done: SendDone) => void, done: SendDone): void {
    let settled = false;
    const finish: SendDone = (err) => {
      if (settled) return;
      settled = true;
      this.release();
      done(err);
    };
    try {
      send(finish);
    } catch (err) {
      finish(toError(err));
    }
  }

  private release(): void {
    const next = this.waiters.shift();
    // The waiter starts on its own microtask, not inside the outcome being reported (which may be
    // a producer walking its batch's messages).
    if (next) queueMicrotask(next);
    else this.used--;
  }

  /** Sends started and not yet settled. */
  get outstanding(): number {
    return this.used;
  }

  /** Sends waiting for room. */
  get waiting(): number {
    return this.waiters.length;
  }
}
