// The ack path, in one place. A message is admitted to its connection's window (AckWindow.admit),
// which decides what settling it means: a PUBACK owed in arrival order, or (QoS 0, `ack:
// on_receive`) only a place given back. The pipeline hands each message a Settlement, which
// counts what the message produced that is not durable yet (one hold per action output and per
// dead letter) and settles the message when the last of them is stored or dead-lettered; the
// window then writes the PUBACKs that are in order, together, once the synchronous run ends.
//
// The window holds the unacked QoS 1 messages of one connection, in arrival order. A message
// settles whenever its outputs are durable, in any order; PUBACKs leave in arrival order (MQTT
// 3.1.1 §4.6 requires it, and brokers count on it), so a settled message waits for the ones before
// it. The window is also the bound on what weir holds from the connection (max_unacked): messages
// that need no ack to wait (QoS 0, `ack: on_receive`) count against it too until their outputs are
// durable, so a slow or stopped sink pauses reading in every mode instead of filling memory.
import type { Socket } from 'node:net';
import type { RuleCounters } from '../metrics/names.js';
import type { DeadLetter } from '../sinks/types.js';

/** An unacked message. A class, not an object literal, so that V8 does not start allocating slots in the old generation (see PublishEvent in event.ts). */
export class Slot {
  done = false;
  constructor(
    readonly messageId: number,
    readonly qos: 1 | 2,
  ) {}
}

export class AckWindow {
  private slots: Slot[] = [];
  private head = 0;
  private dead = false;
  private flushScheduled = false;
  /** Messages held without an ack waiting for them (see hold()). */
  private unackedHeld = 0;
  /** PUBACKs owed at once (see ackNow()), written with the next flush ahead of any slot. */
  private immediate: { messageId: number; qos: 1 | 2 }[] = [];

  constructor(
    private readonly max: number,
    private readonly socket: Socket,
    private readonly onAcked: (count: number) => void,
    /** Called when acks or releases bring the window below its low-water mark. */
    private readonly onRoom: () => void = () => {},
  ) {}

  /** Messages received and not acked yet. */
  get size(): number {
    return this.slots.length - this.head;
  }

  /** Messages weir holds from this connection: unacked, and held without an ack. */
  get held(): number {
    return this.size + this.unackedHeld;
  }

  get full(): boolean {
    return this.held >= this.max;
  }

  /** Below the low-water mark: reading may resume (hysteresis avoids pausing on every message). */
  get hasRoom(): boolean {
    return this.held <= this.max / 2;
  }

  /**
   * Takes a received message in and returns what settles it, to be called once its outputs are
   * durable: its PUBACK in turn (QoS 1 with `ack: after_store`), or, for a message acked now
   * (`ack: on_receive`) or never (QoS 0), the release of its place in the window.
   */
  admit(qos: 0 | 1 | 2, messageId: number | undefined, ackOnReceive: boolean): () => void {
    if (qos === 0 || ackOnReceive) {
      if (qos !== 0) this.ackNow(messageId!, qos);
      return this.hold();
    }
    const slot = this.push(messageId!, qos);
    return () => this.settle(slot);
  }

  /**
   * Counts a message that needs no ack to wait (QoS 0, or already acked with `ack: on_receive`)
   * until its outputs are durable; the returned function, called once, releases it.
   */
  hold(): () => void {
    this.unackedHeld++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.unackedHeld--;
      if (this.hasRoom) this.onRoom();
    };
  }

  /**
   * Acks a message now (`ack: on_receive`). It does not count as unacked while its PUBACK waits
   * for the end of the synchronous run: with hold() it would count twice, and a socket chunk of a
   * few hundred messages would pause reading at half the bound with nothing left to resume it.
   */
  ackNow(messageId: number, qos: 1 | 2): void {
    if (this.dead) return;
    // Behind an unacked message it has to wait its turn: PUBACKs leave in arrival order.
    if (this.size > 0) return this.settle(this.push(messageId, qos));
    this.immediate.push({ messageId, qos });
    this.scheduleFlush();
  }

  push(messageId: number, qos: 1 | 2): Slot {
    const slot = new Slot(messageId, qos);
    this.slots.push(slot);
    return slot;
  }

  /**
   * Marks a message durable. The PUBACKs that are now in order go out together once the current
   * synchronous run ends: a committed batch settles hundreds of messages in one loop, and one
   * socket write for all of them costs a fraction of one write each.
   */
  settle(slot: Slot): void {
    if (this.dead || slot.done) return;
    slot.done = true;
    if (this.slots[this.head] === slot) this.scheduleFlush();
  }

  /** Writes the PUBACKs that are due once the current synchronous run ends (one flush per run). */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(this.flush);
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.dead) return;
    const first = this.head;
    while (this.head < this.slots.length && this.slots[this.head]!.done) this.head++;
    const queued = this.immediate;
    const n = queued.length + this.head - first;
    if (n === 0) return;
    this.immediate = [];
    // PUBACK (or PUBREC for a QoS 2 message a broker sent anyway) is four bytes: fixed header and
    // packet id; MQTT 5 lets a success reason code be omitted (§3.4.2.1). Immediate acks were all
    // taken while no slot was open, so they go first.
    const out = Buffer.allocUnsafe(4 * n);
    for (let i = 0; i < n; i++) {
      const s = i < queued.length ? queued[i]! : this.slots[first + i - queued.length]!;
      out[4 * i] = s.qos === 1 ? 0x40 : 0x50;
      out[4 * i + 1] = 2;
      out.writeUInt16BE(s.messageId, 4 * i + 2);
    }
    this.socket.write(out);
    // Drop the acked prefix now and then, not on every ack.
    if (this.head > 4096 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
    this.onAcked(n);
    if (this.hasRoom) this.onRoom();
  };

  /**
   * The connection is gone: nothing more can be acked on it. Returns how many were pending,
   * including acks taken at receipt whose PUBACK had not been written yet.
   */
  abandon(): number {
    this.dead = true;
    return this.size + this.immediate.length;
  }
}

/** How an item ended. Every item ends exactly once. */
export type Outcome = 'stored' | 'dead_lettered';

/** The rule an item came from, as the one who waits for the item needs it (a SinkRunner's ActionHandle). */
export interface RuleAction {
  readonly ruleCounters: RuleCounters;
}

/** Whoever waits for an item: told exactly once how it ended, by which action, and its dead letter if it has one. */
export interface ItemWaiter {
  itemDone(outcome: Outcome, action: RuleAction, letter?: DeadLetter): void;
}

/**
 * How a message ended, once everything it produced is durable. The ingest only needs to know that
 * it ended (to PUBACK); `weir dlq replay` needs how, to mark the letter it replayed.
 */
export interface MessageOutcome {
  /** Outputs stored by a sink. */
  readonly stored: number;
  /** The dead letters written for it (a rule that failed on it, an output a sink refused), each durable. */
  readonly letters: readonly DeadLetter[];
}

/** Called once per message, when everything it produced is stored or dead-lettered. */
export type Settle = (outcome: MessageOutcome) => void;

const NO_LETTERS: readonly DeadLetter[] = Object.freeze([]);

/** The outcome of a message no rule reads. */
export const NOTHING: MessageOutcome = Object.freeze({ stored: 0, letters: NO_LETTERS });

/**
 * One message on its way: counts what it produced that is not durable yet, and settles (PUBACKs)
 * the message when the last of it is. One object per message rather than a closure per rule and
 * per action: a message lives until its batches commit, and what it holds is what the garbage
 * collector copies (measured: 1.3 KB held per message in flight, a quarter of it closures). It is
 * also the outcome handed to `settle`, so reporting how the message ended allocates nothing.
 */
export class Settlement implements ItemWaiter, MessageOutcome {
  private pending = 1;
  stored = 0;
  /** Allocated only for a message that has a dead letter (rare). */
  private dead: DeadLetter[] | undefined;

  constructor(private readonly settle: Settle) {}

  get letters(): readonly DeadLetter[] {
    return this.dead ?? NO_LETTERS;
  }

  hold(): void {
    this.pending++;
  }

  release(): void {
    if (--this.pending === 0) this.settle(this);
  }

  /** A dead letter of this message is durable. */
  deadLettered(letter: DeadLetter): void {
    (this.dead ??= []).push(letter);
  }

  itemDone(outcome: Outcome, action: RuleAction, letter?: DeadLetter): void {
    const c = action.ruleCounters;
    if (outcome === 'stored') {
      this.stored++;
      c.actionsSuccess.inc();
    } else {
      c.actionsFailed.inc();
      if (letter) this.deadLettered(letter);
    }
    this.release();
  }
}
