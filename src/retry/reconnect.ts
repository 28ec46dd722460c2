// The broker reconnect policy: how long a session waits before its next connection attempt
// (broker.reconnect: min_ms, max_ms, refused_ms).

/** How long refused connections are retried every `refused_ms` before backing off. */
const REFUSED_PROBE_MS = 60_000;

export interface ReconnectConfig {
  readonly min_ms: number;
  readonly max_ms: number;
  readonly refused_ms: number;
}

/**
 * Exponential backoff with full jitter, so a fleet of sidecars does not reconnect in lockstep;
 * except while the broker's port refuses connections. That is a broker restarting (or not yet
 * started): the refusal costs it nothing, and the sooner weir is connected again the less is
 * lost on brokers that do not restore $share subscriptions (Mosquitto 2.0: everything acked
 * between the broker's start and weir's SUBSCRIBE goes to nobody). Measured with the default
 * backoff, weir subscribed again 41-2,328 ms after Mosquitto's start (median ~1 s, ~1,800 of
 * 8,000 messages lost); probing every 20-50 ms, after 16-33 ms and 0 lost (docs/operations.md).
 * Past REFUSED_PROBE_MS of refusals the backoff applies again: a broker that is gone, not restarting.
 */
export class ReconnectPolicy {
  private attempt = 0;
  /** When the broker's port first refused a connection since the session was last connected (0: it has not). */
  private refusedSince = 0;

  constructor(private readonly cfg: ReconnectConfig) {}

  /** Whether refusals are being probed every refused_ms (an outage already said once). */
  get probingRefusals(): boolean {
    return this.refusedSince !== 0;
  }

  /** Connected: the next outage starts from the shortest wait. */
  connected(): void {
    this.attempt = 0;
    this.refusedSince = 0;
  }

  /** The wait before the next attempt; `refused`: the last attempt ended in ECONNREFUSED. */
  delay(refused: boolean): number {
    const { min_ms, max_ms, refused_ms } = this.cfg;
    if (refused && refused_ms > 0) {
      this.refusedSince ||= Date.now();
      if (Date.now() - this.refusedSince < REFUSED_PROBE_MS) return refused_ms / 2 + (Math.random() * refused_ms) / 2;
    }
    const cap = Math.min(max_ms, min_ms * 2 ** Math.min(this.attempt, 16));
    this.attempt++;
    return min_ms + Math.random() * (cap - min_ms);
  }
}
