// This replica's presence connection: a small MQTT 5 connection of its own (`<client_id>-presence`)
// that keeps this member's retained record on its topic, reads every member's, and carries the
// will that marks this member gone if the process dies (member.ts says what a record holds).
//
// The connection's details, each for a reason measured on Mosquitto 2.0.11, 2.0.21 and HiveMQ CE:
// - the will is retained, state gone, with Will Delay Interval = fleet.will_delay_s, so a restart
//   quicker than that does not mark the member gone; the session expiry equals the will delay, since
//   a broker publishes a delayed will when the session ends, whichever comes first;
// - clean start false: a reconnection within the delay resumes the session and cancels the will on
//   all three brokers. With clean start true HiveMQ ends the old session and publishes its will
//   (Mosquitto does not): a replica that restarts would be marked gone on its way back;
// - the normal DISCONNECT (reason 0, session expiry 0) at a clean exit discards the will and the
//   session, after this member wrote its last record (cleared, or stopped).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import mqtt, { type MqttClient } from 'mqtt';
import type { BrokerConfig } from '../../config/schema.js';
import { errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import { brokerTlsOptions } from '../../config/broker-tls.js';
import { VERSION } from '../../version.js';
import { type MemberRecord, type MemberState, type MemberView, memberTopic, membersFilter, parseRecord, sessionIds } from './member.js';

export class Presence {
  readonly clientId: string;
  private readonly members = new Map<string, MemberRecord>();
  private readonly incarnation = randomBytes(8).toString('hex');
  private client: MqttClient | undefined;
  private record: MemberRecord;
  /** Once this member cleared its record (it drained): nothing is published for it again. */
  private cleared = false;
  private echo: { nonce: string; resolve: (view: MemberView) => void } | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly cfg: BrokerConfig,
    private readonly log: Logger,
  ) {
    this.clientId = cfg.client_id;
    this.record = this.make('live');
  }

  get view(): MemberView {
    return this.members;
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  /** Called after every change of the view. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  topicOf(clientId: string): string {
    return memberTopic(this.cfg.fleet.topic_prefix, this.cfg.share_group, clientId);
  }

  /** Connects (and keeps reconnecting); announces `live` on every connection. */
  start(): void {
    const url = new URL(this.cfg.url);
    const tls = url.protocol === 'mqtts:' || url.protocol === 'ssl:' ? brokerTlsOptions(this.cfg, url.hostname.replace(/^\[|\]$/g, '')) : {};
    const gone = this.make('gone');
    const client = mqtt.connect(this.cfg.url, {
      ...tls,
      clientId: `${this.clientId}-presence`,
      protocolVersion: 5,
      clean: false,
      keepalive: this.cfg.keepalive_s,
      username: this.cfg.username,
      password: this.cfg.password,
      reconnectPeriod: Math.max(this.cfg.reconnect.min_ms, 500),
      connectTimeout: 10_000,
      properties: { sessionExpiryInterval: this.cfg.fleet.will_delay_s },
      will: {
        topic: this.topicOf(this.clientId),
        payload: Buffer.from(JSON.stringify(gone)),
        qos: 1,
        retain: true,
        properties: { willDelayInterval: this.cfg.fleet.will_delay_s },
      },
    });
    this.client = client;
    client.on('connect', () => {
      this.log.info({ topic: this.topicOf(this.clientId), state: this.record.state }, 'fleet presence connected');
      // Retained records arrive with the SUBACK: the whole fleet as the broker has it now.
      client.subscribe(membersFilter(this.cfg.fleet.topic_prefix, this.cfg.share_group), { qos: 1 }, (err) => {
        if (err) this.log.warn({ err: errorText(err) }, 'fleet presence: subscribe failed');
      });
      if (!this.cleared) this.publishOwn();
    });
    client.on('message', (topic, payload) => this.onRecord(topic, payload));
    client.on('error', (err) => this.log.warn({ err: errorText(err) }, 'fleet presence connection error'));
  }

  /** Changes this member's record and publishes it (QoS 1, retained); resolves once the broker has it, or at once when not connected. */
  async announce(state: MemberState, extra: Partial<MemberRecord> = {}): Promise<void> {
    this.record = { ...this.make(state), ...extra };
    if (this.cleared || !this.client?.connected) return;
    await this.publishOwn();
  }

  /**
   * At SIGTERM: announces `leaving` and waits until the broker returns it. Resolves with the view as
   * it was when the echo arrived (a copy taken then: records that came in the same read, after the
   * echo, must not count, or the members that left after this one would hide the ones still live),
   * or undefined when no echo came within `waitMs` (broker unreachable: the caller keeps).
   */
  async leaving(waitMs: number): Promise<MemberView | undefined> {
    if (!this.client?.connected) return undefined;
    const nonce = randomBytes(8).toString('hex');
    let timer: NodeJS.Timeout | undefined;
    const echoed = new Promise<MemberView | undefined>((resolve) => {
      this.echo = { nonce, resolve };
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    this.announce('leaving', { nonce }).catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'fleet presence: publishing leaving failed'));
    const view = await echoed;
    clearTimeout(timer);
    this.echo = undefined;
    return view;
  }

  /** Removes a member's record (an empty retained message): this one after it drained, or an orphan after its adoption. */
  async clear(clientId: string): Promise<void> {
    if (clientId === this.clientId) this.cleared = true;
    if (!this.client?.connected) return;
    await this.client.publishAsync(this.topicOf(clientId), Buffer.alloc(0), { qos: 1, retain: true });
  }

  /** A clean end: the will is discarded and the presence session ended (session expiry 0). */
  async close(): Promise<void> {
    const client = this.client;
    if (!client) return;
    // Still connecting (a stop right after start, or the broker away): there is no session to end, and
    // a polite end would wait on a socket that never opened, keeping the process alive.
    if (!client.connected) return void (await client.endAsync(true));
    await client.endAsync(false, { reasonCode: 0, properties: { sessionExpiryInterval: 0 } });
  }

  private make(state: MemberState): MemberRecord {
    return {
      state,
      client_id: this.clientId,
      sessions: sessionIds(this.clientId, this.cfg.connections),
      connections: this.cfg.connections,
      incarnation: this.incarnation,
      pid: process.pid,
      host: hostname(),
      version: VERSION,
      time: new Date().toISOString(),
    };
  }

  private publishOwn(): Promise<void> {
    const client = this.client!;
    return client
      .publishAsync(this.topicOf(this.clientId), JSON.stringify(this.record), { qos: 1, retain: true })
      .then(() => undefined)
      .catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'fleet presence: publish failed'));
  }

  private onRecord(topic: string, payload: Buffer): void {
    const id = topic.slice(topic.lastIndexOf('/') + 1);
    const record = parseRecord(payload);
    if (id === this.clientId) {
      // Someone else's record on this member's topic (an adopter clearing it while this member came
      // back, or an earlier process's will arriving late): say this member's state again.
      if (!this.cleared && record?.incarnation !== this.incarnation && this.client?.connected) {
        this.log.info({ found: record?.state ?? 'cleared' }, 'fleet presence: own record overwritten; announcing again');
        void this.publishOwn();
      }
    }
    const before = this.members.get(id);
    if (record) this.members.set(id, record);
    else this.members.delete(id);
    if (id === this.clientId && record?.nonce !== undefined && record.nonce === this.echo?.nonce) this.echo.resolve(new Map(this.members));
    if (before?.state !== record?.state) this.log.info({ member: id, state: record?.state ?? 'left', was: before?.state }, 'fleet member');
    for (const l of this.listeners) l();
  }
}
