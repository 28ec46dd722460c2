// One MQTT connection that reads on while its QoS 1 messages are still being stored, and PUBACKs
// each one only when the pipeline settles it, in arrival order.
//
// Why not mqtt.js: its client reads the next packet of a connection only after the handler of the
// current QoS 1 message has called back, so holding the PUBACK until a batch commits leaves one
// message in flight per connection (48 msg/s per connection with 20 ms commits, measured). This
// session is built on mqtt-packet, the codec under mqtt.js, and does the few things a subscriber
// needs: CONNECT with a persistent session, SUBSCRIBE, PUBLISH in, PUBACK out, keepalive, and
// reconnect with backoff. See docs/ingest.md.
import net from 'node:net';
import tls from 'node:tls';
import mqttPacket, { type IPublishPacket, type Packet } from 'mqtt-packet';
import { brokerTlsOptions } from '../../config/broker-tls.js';
import { BROKER_SCHEMES } from '../../config/broker-url.js';
import type { BrokerConfig } from '../../config/schema.js';
import { redactUrl, type Logger } from '../../log.js';
import { ReconnectPolicy } from '../../retry/reconnect.js';
import { AckWindow, type Settlement } from './ack-path.js';
import { Liveness } from './liveness.js';
import type { InboundMessage } from './message.js';
import { isFastPublish, PacketReader } from './packet-reader.js';
import { type ConnectionEnd, SESSION_TAKEN_OVER, STABLE_MS, TakeoverWatch } from './session-takeover.js';

/**
 * `persistent`: clean start off and the configured session expiry, so the broker keeps the
 * session, its subscriptions and its queue while weir is away (a replica's restart loses nothing).
 * `transient` (`weir run --transient`): clean start and expiry 0, so the broker drops the session
 * at disconnect and stops dealing this member a share (a one-off run, a debugging session).
 */
export type SessionMode = 'persistent' | 'transient';

/** Called for every message; `settlement`'s first hold must be released once, when it may be acked. */
export type MessageHandler = (msg: InboundMessage, settlement: Settlement) => void;

export interface SessionEvents {
  onState?(connected: boolean): void;
  onReceived?(): void;
  onAcked?(count: number): void;
  /** Messages received but not acked when the connection dropped (the broker will redeliver). */
  onAbandoned?(count: number): void;
  /** Another client with the same client id took the session (session-takeover.ts). */
  onTakenOver?(): void;
}

// mqtt-packet's generator by default builds, on its first call, a cache of all 65,536 two-byte
// packet ids as Buffers: 6 MB of heap (65,536 Buffer objects) kept for the life of the process,
// found in a heap snapshot of weir at idle. weir generates only a few packets per connection
// (CONNECT, SUBSCRIBE, PINGREQ…; PUBACKs are written by ack-path.ts), so it asks for ids to be
// written as they come instead (mqtt-packet's documented writeToStream.cacheNumbers switch).
mqttPacket.writeToStream.cacheNumbers = false;

type State = 'idle' | 'connecting' | 'connected' | 'closing' | 'closed';

export class MqttSession {
  readonly clientId: string;
  private state: State = 'idle';
  private socket: net.Socket | undefined;
  private window: AckWindow | undefined;
  private readonly filters = new Set<string>();
  private nextPacketId = 1;
  /** The last connection attempt ended in ECONNREFUSED: nothing listens at the broker's port. */
  private refused = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Whether the broker, rather than weir, ended the current connection, and with what reason. */
  private brokerEnd: ConnectionEnd | undefined;
  private readonly takeover = new TakeoverWatch();
  private stableTimer: NodeJS.Timeout | undefined;
  private readingStopped = false;
  private readonly pending = new Map<number, (ok: boolean, detail: string) => void>();
  private connectedWaiters: Array<() => void> = [];
  private readonly liveness: Liveness;
  private present = false;
  private readonly reconnect: ReconnectPolicy;

  constructor(
    private readonly cfg: BrokerConfig,
    index: number,
    private readonly handler: MessageHandler,
    private readonly log: Logger,
    private readonly events: SessionEvents = {},
    private readonly mode: SessionMode = 'persistent',
  ) {
    this.clientId = `${cfg.client_id}-${index}`;
    this.liveness = new Liveness(cfg, this.clientId, log);
    this.reconnect = new ReconnectPolicy(cfg.reconnect);
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  /** Whether the broker resumed a session at the last CONNACK (false until the first). */
  get sessionPresent(): boolean {
    return this.present;
  }

  get unacked(): number {
    return this.window?.size ?? 0;
  }

  /** Messages received and not settled yet: unacked, and held without an ack until stored. */
  get held(): number {
    return this.window?.held ?? 0;
  }

  /** Seconds the oldest unacked message has waited for its PUBACK; 0 when none (or not connected). */
  oldestUnackedAge(now?: number): number {
    return this.window?.oldestUnackedAge(now) ?? 0;
  }

  /** While another client holds this session's client id: how weir knows (session-takeover.ts). */
  get takenOver(): string | undefined {
    return this.takeover.takenOver;
  }

  start(): void {
    if (this.state !== 'idle') return;
    this.open();
  }

  /** Resolves when the session is connected (or immediately when it already is). */
  whenConnected(): Promise<void> {
    if (this.state === 'connected') return Promise.resolve();
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  /** Sets the subscribed filters (already $share-prefixed); sends the difference when connected. */
  async setFilters(filters: readonly string[]): Promise<void> {
    const next = new Set(filters);
    const added = [...next].filter((f) => !this.filters.has(f));
    const removed = [...this.filters].filter((f) => !next.has(f));
    this.filters.clear();
    for (const f of next) this.filters.add(f);
    if (this.state !== 'connected') return;
    await Promise.all([added.length ? this.subscribe(added) : undefined, removed.length ? this.unsubscribe(removed) : undefined]);
  }

  /** Stops reading new messages (the broker keeps them queued in the session). */
  pauseReading(): void {
    this.readingStopped = true;
    this.socket?.pause();
  }

  /**
   * Resolves true when every received message is settled (its outputs durable) and acked, and
   * nothing has arrived for `quietMs` (after an UNSUBSCRIBE, messages the broker dealt before it
   * may still be on the way), or false after `timeoutMs`.
   */
  async drained(timeoutMs: number, quietMs = 0): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while ((this.window?.held ?? 0) > 0 || Date.now() - this.liveness.lastReceivedAt < quietMs) {
      if (!(Date.now() <= deadline)) return false; // also when the deadline is not a number
      await new Promise((r) => setTimeout(r, 20));
    }
    return true;
  }

  /**
   * Disconnects. With `endSession` (MQTT 5) the session expiry is set to 0 so the broker drops the
   * session and stops queueing for this member; otherwise the session stays for the next start.
   */
  async close(endSession = false): Promise<void> {
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected';
    this.state = 'closing';
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.stableTimer);
    this.liveness.stop();
    const sock = this.socket;
    if (sock && wasConnected) {
      const disconnect: Packet =
        endSession && this.cfg.protocol_version === 5 ? { cmd: 'disconnect', reasonCode: 0, properties: { sessionExpiryInterval: 0 } } : { cmd: 'disconnect' };
      await new Promise<void>((resolve) => sock.end(mqttPacket.generate(disconnect, { protocolVersion: this.cfg.protocol_version }), () => resolve()));
    }
    sock?.destroy();
    this.state = 'closed';
  }

  private open(): void {
    this.state = 'connecting';
    const url = new URL(this.cfg.url);
    // The configuration was checked against the same table when it loaded (config/broker-url.ts).
    const secure = BROKER_SCHEMES[url.protocol] === 'tls';
    const port = Number(url.port || (secure ? 8883 : 1883));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let sock: net.Socket;
    if (secure) {
      sock = tls.connect({ host, port, ...brokerTlsOptions(this.cfg, host) });
      sock.once('secureConnect', () => this.sendConnect(sock));
    } else {
      sock = net.connect({ host, port });
      sock.once('connect', () => this.sendConnect(sock));
    }
    sock.setNoDelay(true);
    this.socket = sock;
    const reader = new PacketReader(
      this.cfg.protocol_version,
      (p) => this.onPacket(p, sock),
      (err) => {
        this.log.error({ client_id: this.clientId, err: err.message }, 'malformed packet from broker; reconnecting');
        sock.destroy();
      },
    );
    sock.on('data', (chunk: Buffer) => reader.push(chunk));
    // The broker closing its side without a DISCONNECT: how Mosquitto 2.0 ends a taken-over session.
    this.brokerEnd = undefined;
    sock.on('end', () => {
      if (sock === this.socket) this.brokerEnd ??= { by: 'broker' };
    });
    this.refused = false;
    sock.on('error', (err) => {
      const refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      this.refused = refused;
      // While the port refuses, weir retries every refused_ms: one line for the outage, not one per try.
      if (refused && this.reconnect.probingRefusals) return;
      this.log.warn({ client_id: this.clientId, err: redactUrl(err.message) }, 'broker connection error');
    });
    sock.on('close', () => this.onClose(sock));
  }

  private sendConnect(sock: net.Socket): void {
    const v5 = this.cfg.protocol_version === 5;
    const transient = this.mode === 'transient';
    const packet: Packet = {
      cmd: 'connect',
      protocolId: 'MQTT',
      protocolVersion: this.cfg.protocol_version,
      clientId: this.clientId,
      // Persistent unless asked: a share group keeps dealing messages to this member's session
      // while it is away, which is what a restarting replica needs and a one-off run must not do.
      clean: transient,
      keepalive: this.cfg.keepalive_s,
      username: this.cfg.username,
      password: this.cfg.password === undefined ? undefined : Buffer.from(this.cfg.password),
      properties: v5 ? { sessionExpiryInterval: transient ? 0 : this.cfg.session_expiry_s, receiveMaximum: this.cfg.max_unacked } : undefined,
    };
    sock.write(mqttPacket.generate(packet, { protocolVersion: this.cfg.protocol_version }));
  }

  private onPacket(p: Packet, sock: net.Socket): void {
    if (sock !== this.socket) return;
    switch (p.cmd) {
      case 'publish':
        return this.onPublish(p, sock);
      case 'connack': {
        const code = this.cfg.protocol_version === 5 ? p.reasonCode : p.returnCode;
        if (code) {
          this.log.error({ client_id: this.clientId, code }, 'broker refused the connection');
          sock.destroy();
          return;
        }
        this.onConnected(sock, p.sessionPresent);
        return;
      }
      case 'suback':
      case 'unsuback': {
        const done = this.pending.get(p.messageId!);
        this.pending.delete(p.messageId!);
        const codes: number[] = (p as { granted?: number[]; reasonCode?: number[] | number }).granted ?? [];
        const bad = codes.filter((c) => (typeof c === 'number' ? c : 0) >= 0x80);
        done?.(bad.length === 0, bad.length ? `reason codes ${bad.join(',')}` : '');
        return;
      }
      case 'pingresp':
        this.liveness.pong();
        return;
      case 'disconnect': {
        const reason = (p as { reasonCode?: number }).reasonCode ?? 0;
        this.brokerEnd = { by: 'broker', reason };
        // A takeover is said at error level once the connection is closed (onClose).
        if (reason !== SESSION_TAKEN_OVER) this.log.warn({ client_id: this.clientId, reason }, 'broker sent DISCONNECT');
        sock.destroy();
        return;
      }
      case 'pubrel':
        // QoS 2 is never requested (subscriptions are QoS 1); answer politely if a broker sends it.
        sock.write(mqttPacket.generate({ cmd: 'pubcomp', messageId: p.messageId! }, { protocolVersion: this.cfg.protocol_version }));
        return;
      default:
        return;
    }
  }

  private onConnected(sock: net.Socket, sessionPresent: boolean): void {
    this.present = sessionPresent;
    this.reconnect.connected();
    this.state = 'connected';
    const window = new AckWindow(
      this.cfg.max_unacked,
      sock,
      (n) => this.events.onAcked?.(n),
      () => {
        // Reading paused at max_unacked resumes once acks or stored outputs bring the window below half.
        if (sock.isPaused() && !this.readingStopped && this.socket === sock && this.state === 'connected') sock.resume();
      },
    );
    this.window = window;
    // A quiet knock's reconnect was said in one line when it knocked; the rest of it is debug.
    const knocked = this.liveness.takeKnock();
    this.log[knocked ? 'debug' : 'info']({ client_id: this.clientId, session_present: sessionPresent }, 'connected to broker');
    this.events.onState?.(true);
    this.takeover.connected();
    this.watchStable(sock);
    this.liveness.watch(
      sock,
      () => this.socket === sock && this.state === 'connected' && !this.readingStopped,
      () => this.window?.held ?? 0,
    );
    // Subscribing again is harmless when the session kept the subscriptions, and restores them
    // when it did not (session expired, broker restarted without persistence).
    if (this.filters.size) {
      this.subscribe([...this.filters], knocked ? 'debug' : 'info').catch((err: Error) =>
        this.log.error({ client_id: this.clientId, err: err.message }, 'subscribe failed'),
      );
    }
    for (const w of this.connectedWaiters.splice(0)) w();
  }

  private onPublish(p: IPublishPacket, sock: net.Socket): void {
    this.events.onReceived?.();
    const now = Date.now();
    this.liveness.received(now);
    let msg: InboundMessage;
    if (isFastPublish(p)) {
      p.receivedAt = now;
      msg = p;
    } else {
      msg = {
        topic: p.topic,
        payload: typeof p.payload === 'string' ? Buffer.from(p.payload) : p.payload,
        qos: p.qos,
        retain: p.retain,
        dup: p.dup,
        properties: p.properties,
        receivedAt: now,
      };
    }
    const window = this.window!;
    const settlement = window.admit(p.qos, p.messageId, this.cfg.ack === 'on_receive', now);
    if (window.full) sock.pause();
    this.handler(msg, settlement);
  }

  private onClose(sock: net.Socket): void {
    if (sock !== this.socket) return;
    this.liveness.stop();
    for (const [, done] of this.pending) done(false, 'connection closed');
    this.pending.clear();
    const abandoned = this.window?.abandon() ?? 0;
    if (abandoned) this.events.onAbandoned?.(abandoned);
    this.window = undefined;
    clearTimeout(this.stableTimer);
    const wasConnected = this.state === 'connected';
    const closing = this.state === 'closing' || this.state === 'closed';
    const takenOver = wasConnected && !closing ? this.takeover.ended(this.brokerEnd ?? { by: 'weir' }) : undefined;
    if (!wasConnected) {
      this.takeover.failed();
      // An attempt after the knock failed: the connection that comes is an outage's end, said at info.
      this.liveness.quietKnock = false;
    }
    // While the session is taken over, weir waits ever longer rather than take it back at once.
    const delay = closing ? 0 : this.takeover.takenOver ? this.takeover.delay() : this.reconnect.delay(this.refused);
    if (takenOver) {
      this.events.onTakenOver?.();
      this.log.error(
        { client_id: this.clientId, evidence: takenOver, unacked_abandoned: abandoned, retry_in_ms: Math.round(delay) },
        `session taken over by another client with client id ${this.clientId}: each weir process needs its own broker.client_id (docs/operations.md, "Broker sessions"); backing off`,
      );
    } else if (wasConnected) {
      this.log[this.liveness.quietKnock ? 'debug' : 'warn']({ client_id: this.clientId, unacked_abandoned: abandoned }, 'disconnected from broker');
    }
    if (wasConnected) this.events.onState?.(false);
    if (closing) return;
    // Stopping (weir run's shutdown paused reading): a new connection would only subscribe and read
    // again; what was unacked is redelivered to the next start.
    if (this.readingStopped) {
      this.state = 'idle';
      return;
    }
    this.state = 'connecting';
    this.reconnectTimer = setTimeout(() => {
      if (this.readingStopped) this.state = 'idle';
      else this.open();
    }, delay);
  }

  /** While taken over: a connection that stays up for STABLE_MS ends the takeover (session-takeover.ts). */
  private watchStable(sock: net.Socket): void {
    clearTimeout(this.stableTimer);
    if (!this.takeover.takenOver) return;
    this.stableTimer = setTimeout(() => {
      if (this.socket !== sock || this.state !== 'connected' || !this.takeover.stable()) return;
      this.log.info({ client_id: this.clientId, stable_ms: STABLE_MS }, 'session no longer taken over: connected that long without another client taking it');
    }, STABLE_MS);
    this.stableTimer.unref();
  }

  private send(packet: Packet): void {
    this.socket?.write(mqttPacket.generate(packet, { protocolVersion: this.cfg.protocol_version }));
  }

  private allocId(): number {
    const id = this.nextPacketId;
    this.nextPacketId = id >= 65535 ? 1 : id + 1;
    return id;
  }

  private request(packet: Packet & { messageId: number }, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.set(packet.messageId, (ok, detail) => (ok ? resolve() : reject(new Error(`${what} refused: ${detail}`))));
      this.send(packet);
    });
  }

  private subscribe(filters: string[], level: 'info' | 'debug' = 'info'): Promise<void> {
    const v5 = this.cfg.protocol_version === 5;
    return this.request(
      {
        cmd: 'subscribe',
        messageId: this.allocId(),
        // rh 1: retained messages only for a new subscription, not again on every reconnect.
        subscriptions: filters.map((topic) => (v5 ? { topic, qos: 1 as const, rh: 1, rap: false, nl: false } : { topic, qos: 1 as const })),
      },
      `SUBSCRIBE ${filters.join(', ')}`,
    ).then(() => this.log[level]({ client_id: this.clientId, filters }, 'subscribed'));
  }

  private unsubscribe(filters: string[]): Promise<void> {
    return this.request({ cmd: 'unsubscribe', messageId: this.allocId(), unsubscriptions: filters }, `UNSUBSCRIBE ${filters.join(', ')}`).then(() =>
      this.log.info({ client_id: this.clientId, filters }, 'unsubscribed'),
    );
  }
}
