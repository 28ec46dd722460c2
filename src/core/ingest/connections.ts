// weir's side of the broker: N MQTT connections in one share group, each subscribed to
// $share/<group>/<filter> for every filter the rules read (one message's path starts in one of
// them, mqtt-session.ts). Messages go to the pipeline; their PUBACKs wait for its settle (or go out
// at once with `ack: on_receive`, the session still holding the message until it settles).
import type { BrokerConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics/names.js';
import { MqttSession, type MessageHandler, type SessionEvents, type SessionMode } from './mqtt-session.js';

export class BrokerConnections {
  readonly sessions: MqttSession[] = [];

  constructor(
    private readonly cfg: BrokerConfig,
    handler: MessageHandler,
    metrics: Metrics,
    log: Logger,
    mode: SessionMode = 'persistent',
  ) {
    for (let i = 0; i < cfg.connections; i++) {
      const id = `${cfg.client_id}-${i}`;
      const session = new MqttSession(cfg, i, handler, log, sessionEvents(metrics, id), mode);
      // Read at scrape time from the session's ack window, which knows them already.
      metrics.ingestHeld.sample([id], () => session.held);
      metrics.ingestOldestUnackedAge.sample([id], () => session.oldestUnackedAge());
      this.sessions.push(session);
    }
  }

  get connected(): boolean {
    return this.sessions.length > 0 && this.sessions.every((s) => s.connected);
  }

  /** Why the broker side is not ready although it may be connected: sessions another client with the same client id keeps taking. */
  get takenOver(): string | undefined {
    const taken = this.sessions.filter((s) => s.takenOver !== undefined);
    if (!taken.length) return undefined;
    return `session${taken.length > 1 ? 's' : ''} ${taken.map((s) => s.clientId).join(', ')} taken over by another client with the same client id (${taken[0]!.takenOver}): each weir process needs its own broker.client_id`;
  }

  /** Turns rule filters into this group's subscriptions. */
  subscriptionFilters(filters: readonly string[]): string[] {
    const group = this.cfg.share_group;
    return filters.map((f) => (group ? `$share/${group}/${f}` : f));
  }

  async start(filters: readonly string[]): Promise<void> {
    for (const s of this.sessions) {
      await s.setFilters(this.subscriptionFilters(filters));
      s.start();
    }
  }

  /** Follows a rule reload: subscribe to new filters and unsubscribe from dropped ones, live. */
  async setFilters(filters: readonly string[]): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.setFilters(this.subscriptionFilters(filters))));
  }

  pauseReading(): void {
    for (const s of this.sessions) s.pauseReading();
  }

  async drained(timeoutMs: number, quietMs = 0): Promise<boolean> {
    const results = await Promise.all(this.sessions.map((s) => s.drained(timeoutMs, quietMs)));
    return results.every(Boolean);
  }

  async close(endSession = false): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.close(endSession)));
  }
}

/** What a session with client id `id` counts, under the `connection` label: weir's own and adopted ones (fleet/adoption.ts) alike. */
export function sessionEvents(metrics: Metrics, id: string): SessionEvents {
  const received = metrics.ingestReceived.labels(id);
  const acked = metrics.ingestAcked.labels(id);
  const unacked = metrics.ingestUnacked.labels(id);
  const connected = metrics.ingestConnected.labels(id);
  const abandoned = metrics.ingestAbandoned.labels(id);
  const takenOver = metrics.ingestSessionTakenOver.labels(id);
  return {
    onState: (up) => connected.set(up ? 1 : 0),
    onReceived: () => {
      received.inc();
      unacked.inc();
    },
    onAcked: (n) => {
      acked.inc(n);
      unacked.dec(n);
    },
    onAbandoned: (n) => {
      abandoned.inc(n);
      unacked.dec(n);
    },
    onTakenOver: () => takenOver.inc(),
  };
}
