// Whether a broker connection is alive: keepalive (PINGREQ, and the PINGRESP or PUBLISH that
// answers it) and the quiet watch (a connection that brought nothing for reconnect.quiet_ms is
// reconnected once). Their timers and flags; the session closes the socket when either says so.
import type net from 'node:net';
import mqttPacket from 'mqtt-packet';
import type { BrokerConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';

export class Liveness {
  private quietTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private pingOutstanding = false;
  /** When the last PINGREQ was written. */
  private pingSentAt = 0;
  /** When the last PUBLISH arrived. */
  lastReceivedAt = 0;
  /** Whether a connection that goes quiet gets one more connection (see watchQuiet): not after one that brought nothing. */
  private knockAgain = true;
  /** The connection being replaced was closed by the quiet watch: its reconnect is logged as that one line. */
  quietKnock = false;

  constructor(
    private readonly cfg: BrokerConfig,
    private readonly clientId: string,
    private readonly log: Logger,
  ) {}

  /**
   * A connection is up: watch it. `current()`: it is still the session's connection, connected
   * and reading; `held()`: messages received and not settled yet.
   */
  watch(sock: net.Socket, current: () => boolean, held: () => number): void {
    this.watchQuiet(sock, current, held);
    clearInterval(this.keepaliveTimer);
    if (this.cfg.keepalive_s > 0) {
      this.keepaliveTimer = setInterval(() => {
        // While reading is paused (max_unacked reached: a sink is slow or down) the PINGRESP sits
        // unread in the socket: its absence then says nothing about the broker. Keep pinging, so
        // the broker keeps the connection, and judge liveness only while reading.
        // A PUBLISH that arrived after the PINGREQ is as good as its PINGRESP: the broker is
        // there. Under load Mosquitto 2.0.11 let 30 s pass without a PINGRESP while delivering
        // tens of thousands of messages a second on the same connection (npm run bench -- pg, 4
        // December), and a reconnect there costs more than time: it deals the resumed `$share`
        // session's messages again (docs/operations.md).
        if (this.pingOutstanding && !sock.isPaused() && this.lastReceivedAt < this.pingSentAt) {
          this.log.warn({ client_id: this.clientId }, 'no PINGRESP within keepalive; reconnecting');
          sock.destroy();
          return;
        }
        this.pingOutstanding = true;
        this.pingSentAt = Date.now();
        sock.write(mqttPacket.generate({ cmd: 'pingreq' }));
      }, this.cfg.keepalive_s * 1000);
    }
  }

  /** A PUBLISH arrived at `now`. */
  received(now: number): void {
    this.lastReceivedAt = now;
    this.knockAgain = true;
  }

  /** A PINGRESP arrived. */
  pong(): void {
    this.pingOutstanding = false;
  }

  /** The connection closed (or is being closed): the timers stop. */
  stop(): void {
    clearInterval(this.keepaliveTimer);
    clearInterval(this.quietTimer);
    this.pingOutstanding = false;
  }

  /** Whether this connection came after a quiet knock (said once, when it knocked); clears it. */
  takeKnock(): boolean {
    const knocked = this.quietKnock;
    this.quietKnock = false;
    return knocked;
  }

  /**
   * HiveMQ CE 2025.5, restarted after a crash (SIGKILL), resumes weir's sessions and then, now and
   * then, delivers nothing more of what it queued for their shared subscriptions, whatever the
   * wait, until the session connects again (measured: 2,000-2,500 messages held 20 s after the
   * restart; in a 200,000-message run a stall 80 s after it held 68,915 until the end;
   * test/e2e/broker-restart.test.ts, npm run faults). So a connection that has been quiet for
   * `reconnect.quiet_ms` with nothing unacked is reconnected, once: if that brings messages, the
   * watch goes on; if it brings nothing, the queue was empty, and the next knock waits until a
   * message has arrived. An idle fleet costs one extra connection per quiet spell; a held queue
   * is delayed by quiet_ms, not lost.
   */
  private watchQuiet(sock: net.Socket, current: () => boolean, held: () => number): void {
    const ms = this.cfg.reconnect.quiet_ms;
    clearInterval(this.quietTimer);
    if (ms <= 0) return;
    const since = Date.now();
    this.quietTimer = setInterval(
      () => {
        // Stopping (reading paused): the broker redelivers what is left to the next start.
        if (!current()) return clearInterval(this.quietTimer);
        if (!this.knockAgain || Date.now() - Math.max(since, this.lastReceivedAt) < ms || held() > 0) return;
        clearInterval(this.quietTimer);
        this.knockAgain = false;
        this.quietKnock = true;
        this.log.info({ client_id: this.clientId, quiet_ms: ms }, 'connection went quiet; reconnecting in case the broker holds its queue');
        sock.destroy();
      },
      Math.min(ms, 1000),
    );
    this.quietTimer.unref();
  }
}
