// The fleet as one replica takes part in it (DESIGN.md decision 12, docs/fleet.md): its presence
// (presence.ts), the decision at SIGTERM whether to drain or keep its sessions, and the adoption
// of orphaned members' sessions (adoption.ts). The runtime starts it after its own sessions and
// asks it, at SIGTERM, whether to leave the share group for good.
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerConfig } from '../../config/schema.js';
import type { MessageHandler } from '../ingest/mqtt-session.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics/names.js';
import { Adoption } from './adoption.js';
import { drainConfirmed, leaveDecision, MEMBER_STATES } from './member.js';
import { Presence } from './presence.js';

/**
 * How long a tentative drain waits for the records of members leaving at the same time before it
 * is confirmed (member.ts, drainConfirmed: MQTT does not order messages across publishers). On
 * loopback the records arrive within milliseconds; one second is small beside the termination
 * grace, and the chart's margin covers it (docs/fleet.md).
 */
const LEAVE_SETTLE_MS = 1_000;

/** How a replica leaves at SIGTERM: decided from the fleet (auto), or forced by `weir run --drain` / `--keep-session`. */
export type LeaveMode = 'auto' | 'drain' | 'keep';

/** Why the fleet is off for this configuration, or undefined when it runs. */
export function fleetOff(cfg: BrokerConfig): string | undefined {
  if (cfg.fleet.presence === 'off') return 'broker.fleet.presence is off';
  if (cfg.protocol_version !== 5) return 'the presence needs MQTT 5 (broker.protocol_version 5)';
  if (!cfg.share_group) return 'no share_group: a single member';
  return undefined;
}

export class Fleet {
  readonly presence: Presence;
  private readonly adoption: Adoption;

  constructor(
    private readonly cfg: BrokerConfig,
    handler: MessageHandler,
    filters: () => string[],
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.presence = new Presence(cfg, log);
    this.adoption = new Adoption(cfg, this.presence, handler, filters, metrics, log);
    for (const state of MEMBER_STATES) metrics.fleetMembers.sample([state], () => [...this.presence.view.values()].filter((r) => r.state === state).length);
    for (const decision of ['drain', 'keep']) metrics.fleetLeave.labels(decision);
  }

  /** Announces this replica live and starts watching for orphans; call once its own sessions are started. */
  start(): void {
    this.presence.start();
    this.adoption.start();
  }

  /**
   * At SIGTERM: lets go of adoptions under way, then says whether to end this replica's sessions.
   * auto: announce `leaving`, wait for its echo, drain when another member was live then and still
   * takes the share a second later (member.ts, leaveDecision and drainConfirmed).
   */
  async leave(mode: LeaveMode): Promise<boolean> {
    await this.adoption.stop();
    const { decision, reason, others } = await this.decide(mode);
    this.metrics.fleetLeave.labels(decision).inc();
    this.log.info({ decision, reason, live_members: others }, decision === 'drain' ? 'leaving the fleet: draining' : 'leaving the fleet: keeping the sessions');
    return decision === 'drain';
  }

  private async decide(mode: LeaveMode): Promise<{ decision: 'drain' | 'keep'; reason: string; others: string[] }> {
    if (mode !== 'auto') {
      // Not awaited: a broker that does not answer must not hold the stop (finish() is bounded by the runtime).
      void this.presence.announce('leaving');
      return { decision: mode, reason: mode === 'drain' ? 'weir run --drain' : 'weir run --keep-session', others: [] };
    }
    if (!this.presence.connected)
      return {
        decision: 'keep',
        reason: 'the presence connection is not up (the broker unreachable, or weir not started yet): keeping the sessions is what loses nothing',
        others: [],
      };
    const atEcho = await this.presence.leaving(this.cfg.fleet.leave_wait_ms);
    if (!atEcho)
      return {
        decision: 'keep',
        reason: `no answer from the broker within ${this.cfg.fleet.leave_wait_ms} ms (leave_wait_ms): keeping the sessions is what loses nothing`,
        others: [],
      };
    const { decision, others } = leaveDecision(atEcho, this.presence.clientId);
    // Not awaited, as above: what the others see of this decision (drainConfirmed) must not hold the stop.
    void this.presence.announce('leaving', { decision });
    if (decision === 'keep') return { decision, reason: 'no other member is live: the broker queues for this one', others };
    await sleep(LEAVE_SETTLE_MS);
    const check = drainConfirmed(this.presence.view, this.presence.clientId);
    if (check.confirmed) return { decision, reason: 'other members are live and take the share', others: check.holders };
    void this.presence.announce('leaving', { decision: 'keep' });
    return { decision: 'keep', reason: 'the other members are leaving too and none keeps its sessions: keeping them is what loses nothing', others: [] };
  }

  /** After stop: clears this member's record when its sessions ended, or says `stopped` when kept; then disconnects cleanly (no will). */
  async finish(sessionsEnded: boolean): Promise<void> {
    try {
      if (sessionsEnded) await this.presence.clear(this.presence.clientId);
      else await this.presence.announce('stopped');
    } finally {
      await this.presence.close();
    }
  }
}
