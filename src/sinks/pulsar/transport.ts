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

/**
 * One message a transport is sending: it holds a unit of max_pending room until it settles. An
 * object rather than closures around the message (three of them per message before): it lives
 * until the broker's receipt, through young-generation collections that copy whatever is alive.
 */
export class PendingSend {
  private done: SendDone | undefined;

  constructor(
    readonly msg: OutgoingMessage,
    done: SendDone,
    private readonly limit: PendingLimit,
  ) {
    this.done = done;
  }

  /** Frees the room, then reports the outcome (nothing = stored); a second call is ignored. */
  settle(err?: Error): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    this.limit.release();
    done(err);
  }
}

/** A counting semaphore for max_pending: a send waits while that many messages are outstanding. */
export class PendingLimit {
  private used = 0;
  private readonly waiters: PendingSend[] = [];

  /** `start` begins one send once there is room; the send settles it, and one that throws is settled as failed. */
  constructor(
    private readonly max: number,
    private readonly start: (p: PendingSend) => void,
  ) {}

  /** Sends `msg` once there is room; `done` is told its outcome once, after its room is free again. */
  send(msg: OutgoingMessage, done: SendDone): void {
    const p = new PendingSend(msg, done, this);
    if (this.used < this.max) {
      this.used++;
      this.begin(p);
    } else {
      this.waiters.push(p);
    }
  }

  private begin(p: PendingSend): void {
    try {
      this.start(p);
    } catch (err) {
      p.settle(toError(err));
    }
  }

  /** A send settled (PendingSend.settle): its room goes to the next waiting send, or is free. */
  release(): void {
    const next = this.waiters.shift();
    // The waiter starts on its own microtask, not inside the outcome being reported (which may be
    // a producer walking its batch's messages).
    if (next) queueMicrotask(() => this.begin(next));
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
