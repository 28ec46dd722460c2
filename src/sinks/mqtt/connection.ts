// The mqtt sink's one connection to the broker it republishes to, over mqtt.js, with the parts
// mqtt.js leaves to its user:
// - a bound on QoS 1 publishes in flight: mqtt.js sends every publish at once, and does not keep
//   to the Receive Maximum of the broker's CONNACK (HiveMQ CE disconnects a client that exceeds it,
//   0x93), so publish() waits for a slot under min(max_in_flight_messages, Receive Maximum);
// - no offline queue and no reconnect of its own (reconnectPeriod 0): a publish that finds the
//   connection gone, or is pending when it drops, fails at once as connection_lost, and the core's
//   retry sends it on a new connection. mqtt.js would otherwise hold it for a reconnect that the
//   sink cannot see, and a write would neither succeed nor fail;
// - a PUBACK deadline: a publish older than publish_timeout_ms drops the connection (one timer
//   per connection, not one per publish).
// Many publishes are in flight at once: mqtt.js does not wait for one PUBACK before the next
// PUBLISH (measured: peakInFlight reached the window of 1,000 against a Mosquitto without an
// in-flight limit; README.md, Many in flight).
import mqtt, { type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import { MqttError } from './errors.js';
import type { MqttItem } from './action.js';

/** Reason codes of a PUBACK that are worth sending again (MQTT 5 §3.4.2.1); every other failure is a refusal of the message. */
const TRANSIENT_PUBACK = new Set([0x91 /* Packet Identifier in use */, 0x97 /* Quota exceeded */]);

interface Pending {
  readonly since: number;
  readonly fail: (err: Error) => void;
}

interface Waiting {
  readonly item: MqttItem;
  readonly index: number;
  readonly settle: (index: number, err: Error | undefined) => void;
}

export interface ConnectionOptions {
  readonly url: string;
  readonly client: IClientOptions;
  readonly maxInFlight: number;
  readonly publishTimeoutMs: number;
  /** Ends a connection attempt under way (it fails as aborted). */
  readonly signal?: AbortSignal;
}

/** What the broker's CONNACK (MQTT 5) says it does not support; absent properties mean it supports them. */
export interface BrokerLimits {
  /** Retain Available: false when the broker refuses (disconnects) a PUBLISH with the retain flag. */
  readonly retainAvailable: boolean;
  /** Maximum QoS: the highest QoS the broker takes in a PUBLISH. */
  readonly maximumQoS: 0 | 1 | 2;
}

export class Connection {
  /** Why the connection is gone (set once); every later publish fails with it. */
  private gone: Error | undefined;
  private inFlight = 0;
  /** The most publishes that were in flight at once: what mqtt.js allows, measured. */
  peakInFlight = 0;
  /** Items waiting for a slot in the window, oldest first from `next`. */
  private readonly waiting: Waiting[] = [];
  private next = 0;
  private pumpQueued = false;
  private readonly pending = new Set<Pending>();
  private readonly watchdog: NodeJS.Timeout;

  private constructor(
    private readonly client: MqttClient,
    /** min(max_in_flight_messages, the broker's Receive Maximum). */
    readonly window: number,
    readonly limits: BrokerLimits,
    private readonly publishTimeoutMs: number,
    onGone: (c: Connection) => void,
  ) {
    client.on('close', () => {
      this.drop(new MqttError('sink.mqtt.connection_lost', 'the connection to the broker closed'));
      onGone(this);
    });
    client.on('error', () => undefined); // 'close' follows and says what matters
    this.watchdog = setInterval(() => this.checkDeadline(), Math.max(50, Math.floor(publishTimeoutMs / 4)));
    this.watchdog.unref();
  }

  /** Connects; resolves once the broker's CONNACK accepted the connection. */
  static open(o: ConnectionOptions, onGone: (c: Connection) => void): Promise<Connection> {
    return new Promise((resolve, reject) => {
      if (o.signal?.aborted) return reject(new MqttError('sink.mqtt.aborted', 'connection attempt aborted'));
      // mqtt.js logs through `debug` unless given a log: about ten calls per PUBLISH and its PUBACK,
      // 3 µs of weir's CPU per republished message even with nothing enabled (measured). Its
      // lines still come with DEBUG=mqttjs*.
      const log = process.env.DEBUG?.includes('mqttjs') ? {} : { log: () => undefined };
      const client = mqtt.connect(o.url, { ...o.client, ...log, reconnectPeriod: 0, resubscribe: false, queueQoSZero: false });
      const abort = () => fail(new MqttError('sink.mqtt.aborted', 'connection attempt aborted'));
      const closed = () => fail(new MqttError('sink.mqtt.connection_lost', 'the connection closed before the broker accepted it'));
      // Only this attempt's own listeners come off: mqtt.js listens to its own 'close' to clear its
      // CONNACK timer and keep-alive (removed, a refused connection kept the process alive until
      // connect_timeout_ms had passed).
      const settle = () => {
        o.signal?.removeEventListener('abort', abort);
        client.off('error', fail);
        client.off('close', closed);
        client.off('connect', connected);
      };
      const fail = (err: Error) => {
        settle();
        client.on('error', () => undefined);
        client.end(true);
        reject(connectError(err));
      };
      const connected = (connack: IConnackPacket) => {
        settle();
        const props = connack.properties;
        const receiveMaximum = props?.receiveMaximum ?? 65535;
        const limits: BrokerLimits = { retainAvailable: props?.retainAvailable ?? true, maximumQoS: (props?.maximumQoS ?? 2) as 0 | 1 | 2 };
        resolve(new Connection(client, Math.min(o.maxInFlight, receiveMaximum), limits, o.publishTimeoutMs, onGone));
      };
      o.signal?.addEventListener('abort', abort, { once: true });
      client.once('error', fail);
      client.once('close', closed);
      client.once('connect', connected);
    });
  }

  get open(): boolean {
    return this.gone === undefined;
  }

  /**
   * Publishes a batch; resolves once every item has its outcome, in the items' order: undefined
   * (QoS 1: PUBACKed; QoS 0: on the socket) or why not — refused (a failure reason code), busy, or
   * connection_lost. Never rejects. One promise per batch and a callback per item, not an async
   * call and two promises per item: weir's CPU per republished message went from 28.8 to 23.8 µs
   * (docs/benchmarks.md, republish).
   */
  publishAll(items: readonly MqttItem[]): Promise<Array<Error | undefined>> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const outcomes = new Array<Error | undefined>(items.length);
      let left = items.length;
      const settle = (index: number, err: Error | undefined) => {
        outcomes[index] = err;
        if (--left === 0) resolve(outcomes);
      };
      for (let i = 0; i < items.length; i++) this.waiting.push({ item: items[i]!, index: i, settle });
      this.pump();
    });
  }

  /**
   * After PUBACKs: sends what waits once, when the event loop has handled every packet of the read
   * (setImmediate), rather than one PUBLISH per PUBACK, each its own write system call (mqtt.js
   * flushes the socket on the next tick: 8 µs of writev per message, measured).
   */
  private pumpSoon(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Sends what waits, while the window has room (QoS 0 never waits for a slot), as one write to the socket. */
  private pump(): void {
    const stream = this.client.stream;
    stream.cork();
    try {
      this.sendWaiting();
    } finally {
      stream.uncork();
    }
  }

  private sendWaiting(): void {
    while (this.next < this.waiting.length) {
      const w = this.waiting[this.next]!;
      if (this.gone) {
        w.settle(w.index, this.gone);
      } else {
        if (w.item.qos === 1 && this.inFlight >= this.window) break;
        this.send(w);
      }
      this.waiting[this.next++] = undefined as unknown as Waiting;
    }
    if (this.next === this.waiting.length) {
      this.waiting.length = 0;
      this.next = 0;
    }
  }

  private send(w: Waiting): void {
    const { item } = w;
    const qos1 = item.qos === 1;
    if (qos1 && ++this.inFlight > this.peakInFlight) this.peakInFlight = this.inFlight;
    const p: Pending = { since: Date.now(), fail: (err) => w.settle(w.index, err) };
    this.pending.add(p);
    this.client.publish(item.topic, item.payload, { qos: item.qos, retain: item.retain, properties: item.properties }, (err) => {
      if (!this.pending.delete(p)) return; // already failed by drop()
      w.settle(w.index, err ? publishError(err, item.topic) : undefined);
      if (qos1) {
        this.inFlight--;
        this.pumpSoon();
      }
    });
  }

  /** Ends the connection (DISCONNECT when it is up); pending publishes fail as connection_lost. */
  async close(): Promise<void> {
    this.drop(new MqttError('sink.mqtt.closed', 'the sink closed its connection'));
    await new Promise<void>((resolve) => this.client.end(false, {}, () => resolve()));
  }

  private drop(why: Error): void {
    if (this.gone) return;
    this.gone = why;
    clearInterval(this.watchdog);
    for (const p of this.pending) p.fail(why);
    this.pending.clear();
    this.pump(); // fails what waits
  }

  /** A publish pending for longer than publish_timeout_ms: the connection is dropped, and every pending publish retried. */
  private checkDeadline(): void {
    const oldest = this.pending.values().next().value;
    if (oldest === undefined || Date.now() - oldest.since < this.publishTimeoutMs) return;
    this.drop(new MqttError('sink.mqtt.connection_lost', `no PUBACK within publish_timeout_ms (${this.publishTimeoutMs} ms)`));
    this.client.end(true);
  }
}

interface ReasonError {
  code?: unknown;
  message: string;
}

function publishError(err: Error, topic: string): Error {
  const rc = (err as ReasonError).code;
  if (typeof rc === 'number') {
    const name = mqtt.ReasonCodes[rc as keyof typeof mqtt.ReasonCodes] || 'unknown reason code';
    const text = `the broker refused the PUBLISH to ${topic}: 0x${rc.toString(16).padStart(2, '0')} ${name}`;
    return new MqttError(TRANSIENT_PUBACK.has(rc) ? 'sink.mqtt.busy' : 'sink.mqtt.refused', text);
  }
  return new MqttError('sink.mqtt.connection_lost', `publish to ${topic} failed: ${err.message}`, { cause: err });
}

/** CONNACK codes that say "later" (3.1.1: server unavailable; 5: unavailable, busy, shutting down, rate, quota). */
const CONNACK_LATER = new Set([3, 0x88, 0x89, 0x8b, 0x96, 0x97]);

/**
 * A CONNACK refusal is the operator's to fix unless it says "later"; anything else (refused port,
 * reset, timeout) is the network's. A refusal names its reason code and the code's name
 * ('the broker refused the connection: CONNACK 0x86 Bad User Name or Password').
 */
function connectError(err: Error): Error {
  if (err instanceof MqttError) return err;
  const rc = (err as ReasonError).code;
  if (typeof rc !== 'number' || CONNACK_LATER.has(rc)) return err;
  const name = mqtt.ReasonCodes[rc as keyof typeof mqtt.ReasonCodes] || 'unknown reason code';
  const text = `the broker refused the connection: CONNACK 0x${rc.toString(16).padStart(2, '0')} ${name}`;
  return new MqttError('sink.mqtt.connect_refused', text, { cause: err });
}
