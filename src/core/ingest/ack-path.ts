// The ack path, in one place. A message is admitted to its connection's window (AckWindow.admit),
// which decides what settling it means: a PUBACK owed in arrival order (a Slot), or (QoS 0, `ack:
// on_receive`) only a place given back. Either is a Settlement, which the pipeline uses to count
// what the message produced that is not durable yet (one hold per action output and per dead
// letter) and which settles the message when the last of them is stored or dead-lettered; the
// window then writes the PUBACKs that are in order, together, once the synchronous run ends.
//
// The window holds the unacked QoS 1 messages of one connection, in arrival order. A message
// settles whenever its outputs are durable, in any order; PUBACKs leave in arrival order (MQTT
// 3.1.1 §4.6 requires it, and brokers count on it), so a settled message waits for the ones before
// it. The window is also the bound on what weir holds from the connection (max_unacked): messages
// that need no ack to wait (QoS 0, `ack: on_receive`) count against it too until their outputs are
// durable, so a slow or stopped sink pauses reading in every mode instead of filling memory.
//
// How long the oldest unacked message has waited (weir_ingest_oldest_unacked_age_seconds) is read
// at scrape time from the first slot not yet acked: each slot keeps its arrival in tenths of a
// second since the window opened, a small integer (a V8 Smi, stored in the slot's field: no
// HeapNumber per message) that stays one for 3.4 years of connection.
import type { Socket } from 'node:net';
import type { DeadLetter } from '../../dead-letters/letter.js';

export class AckWindow {
  /** Arrival order; an acked slot's place is emptied, so the slot dies young (see flush). */
  private slots: (Slot | undefined)[] = [];
  private head = 0;
  private dead = false;
  private flushScheduled = false;
  /** Messages held without an ack waiting for them (see hold()). */
  private unackedHeld = 0;
  /** PUBACKs owed at once (see ackNow()), written with the next flush ahead of any slot. */
  private immediate: { messageId: number; qos: 1 | 2 }[] = [];
  /** When the window opened (ms): slots keep their arrival relative to it (see the header). */
  private readonly opened = Date.now();

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

  /** Seconds the oldest message not yet acked has waited for its PUBACK (0 when none); `now` in ms. */
  oldestUnackedAge(now = Date.now()): number {
    const oldest = this.slots[this.head];
    if (!oldest) return 0;
    return Math.max(0, (now - this.opened) / 1000 - oldest.arrived / 10);
  }

  get full(): boolean {
    return this.held >= this.max;
  }

  /** Below the low-water mark: reading may resume (hysteresis avoids pausing on every message). */
  get hasRoom(): boolean {
    return this.held <= this.max / 2;
  }

  /**
   * Takes a received message in and returns what settles it, released once its outputs are
   * durable: its PUBACK in turn (QoS 1 with `ack: after_store`), or, for a message acked now
   * (`ack: on_receive`) or never (QoS 0), the release of its place in the window.
   */
  admit(qos: 0 | 1 | 2, messageId: number | undefined, ackOnReceive: boolean, receivedAt = Date.now()): Settlement {
    if (qos === 0 || ackOnReceive) {
      if (qos !== 0) this.ackNow(messageId!, qos, receivedAt);
      return this.hold();
    }
    return this.push(messageId!, qos, receivedAt);
  }

  /**
   * Counts a message that needs no ack to wait (QoS 0, or already acked with `ack: on_receive`)
   * until its outputs are durable; releasing the returned settlement gives its place back, once.
   */
  hold(): Settlement {
    this.unackedHeld++;
    return new HeldPlace(this);
  }

  /** Gives back the place of a message held by hold(). */
  unhold(): void {
    this.unackedHeld--;
    if (this.hasRoom) this.onRoom();
  }

  /**
   * Acks a message now (`ack: on_receive`). It does not count as unacked while its PUBACK waits
   * for the end of the synchronous run: with hold() it would count twice, and a socket chunk of a
   * few hundred messages would pause reading at half the bound with nothing left to resume it.
   */
  ackNow(messageId: number, qos: 1 | 2, receivedAt = Date.now()): void {
    if (this.dead) return;
    // Behind an unacked message it has to wait its turn: PUBACKs leave in arrival order.
    if (this.size > 0) return this.settle(this.push(messageId, qos, receivedAt));
    this.immediate.push({ messageId, qos });
    this.scheduleFlush();
  }

  push(messageId: number, qos: 1 | 2, receivedAt = Date.now()): Slot {
    const slot = new Slot(this, messageId, qos, ((receivedAt - this.opened) / 100) | 0);
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
    // Let go of the acked slots now: kept until the prefix is dropped below, thousands of them
    // lived through young-generation collections and were promoted (npm run bench -- standalone,
    // discard: 25 -> 80 bytes promoted per message once the slot was also the settlement).
    for (let i = first; i < this.head; i++) this.slots[i] = undefined;
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

/** Whoever waits for an item: told exactly once how it ended, and its dead letter if it has one. */
export interface ItemWaiter {
  itemDone(outcome: Outcome, letter?: DeadLetter): void;
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

/**
 * One message on its way: counts what it produced that is not durable yet, and settles the message
 * when the last of it is. The one who takes a message in makes it (with one hold, which the
 * pipeline releases once it has handed the message on): the ack window makes a Slot, so that the
 * slot that orders the message's PUBACK is also what counts its outputs. One object per message
 * rather than a closure per rule and per action, or a slot, a closure settling it and a settlement
 * apart: a message lives until its batches commit, and what it holds is what the garbage collector
 * copies (docs/benchmarks.md, memory: 232 bytes per message in flight were these four objects). It
 * is also the outcome reported, so reporting how the message ended allocates nothing.
 */
export abstract class Settlement implements ItemWaiter, MessageOutcome {
  private pending = 1;
  stored = 0;
  /** Allocated only for a message that has a dead letter (rare). */
  private dead: DeadLetter[] | undefined;

  get letters(): readonly DeadLetter[] {
    return this.dead ?? NO_LETTERS;
  }

  hold(): void {
    this.pending++;
  }

  /** Releases one hold; the last one settles the message. Releasing more often than held does nothing more. */
  release(): void {
    if (--this.pending === 0) this.settled();
  }

  /** Everything the message produced is durable (called once). */
  protected abstract settled(): void;

  /** A dead letter of this message is durable. */
  deadLettered(letter: DeadLetter): void {
    (this.dead ??= []).push(letter);
  }

  itemDone(outcome: Outcome, letter?: DeadLetter): void {
    if (outcome === 'stored') this.stored++;
    else if (letter) this.deadLettered(letter);
    this.release();
  }
}

/** A QoS 1 message waiting for its PUBACK, in its window's arrival order. */
export class Slot extends Settlement {
  done = false;

  constructor(
    private readonly window: AckWindow,
    readonly messageId: number,
    readonly qos: 1 | 2,
    /** Arrival, in tenths of a second since the window opened (see the header). */
    readonly arrived: number,
  ) {
    super();
  }

  protected settled(): void {
    this.window.settle(this);
  }
}

/** A message held in its window without an ack to wait for (see AckWindow.hold). */
class HeldPlace extends Settlement {
  constructor(private readonly window: AckWindow) {
    super();
  }

  protected settled(): void {
    this.window.unhold();
  }
}

/** A settlement that calls `settle` with the outcome, for one who takes messages in without a window (`weir dlq replay`). */
export class CallbackSettlement extends Settlement {
  constructor(private readonly settle: Settle) {
    super();
  }

  protected settled(): void {
    this.settle(this);
  }
}
