// Two processes with one client id take the broker session from each other: the broker closes
// the older connection whenever the other connects. Reconnecting at once, as after any drop, makes
// the two fight about once a second for ever (issue 29: 60 reconnects in 8 s, logged only as
// "disconnected from broker"). This watch tells such a takeover from other drops, so the session
// can say so at error level, count it, report it on /readyz and back off (TAKEN_OVER_POLICY:
// growing waits up to a minute) instead of fighting.
//
// How a takeover shows:
// - MQTT 5 brokers that say why send DISCONNECT with reason 0x8E, "session taken over" (EMQX,
//   HiveMQ, newer Mosquitto): certain at the first.
// - Mosquitto 2.0.11 (Debian 12's) only closes the old connection, without a DISCONNECT, on MQTT 5
//   as on 3.1.1 (measured: two clients with one id, the old one gets no packet, just the close;
//   the log says "Client … already connected, closing old connection"). A broker also closes a
//   connection when it stops, but then the next connection is refused, or it stays. So a
//   connection that was up and that the broker ended without a reason counts, and SILENT_ENDS of
//   them in a row, each after the broker accepted the connection again, is taken for a takeover.
//   A connection weir ended (keepalive, quiet watch), one that could not be opened, or one that
//   stayed up for STABLE_MS, starts the count again.
//
// The takeover holds until a connection stays up for STABLE_MS, longer than the longest wait of
// the policy: then the other client has stopped trying (or was given its own client id).
import { backoffMs, TAKEN_OVER_POLICY } from '../../retry/backoff.js';

/** MQTT 5 reason code of a DISCONNECT from the broker: another connection took the session over. */
export const SESSION_TAKEN_OVER = 0x8e;

/** Connections ended by the broker without a reason, in a row, that are taken for a takeover. */
export const SILENT_ENDS = 2;

/** Up this long without being taken over: the takeover is over. Twice the longest wait. */
export const STABLE_MS = 2 * TAKEN_OVER_POLICY.max_ms;

/** How a connection that was up ended. */
export type ConnectionEnd =
  /** The broker ended it: with a DISCONNECT's reason code, or without one (the socket closed). */
  | { readonly by: 'broker'; readonly reason?: number }
  /** weir ended it (keepalive, the quiet watch, a malformed packet), or the network did. */
  | { readonly by: 'weir' };

export class TakeoverWatch {
  private silentEnds = 0;
  /** Takeovers since the last stable connection: the backoff's attempt. */
  private takeovers = 0;
  private evidence: string | undefined;
  private connectedAt = 0;

  /** While taken over: how weir knows (for the log and /readyz). */
  get takenOver(): string | undefined {
    return this.evidence;
  }

  /** A connection was accepted (CONNACK 0). */
  connected(now = Date.now()): void {
    this.connectedAt = now;
  }

  /** A connection attempt failed before it was accepted: not a takeover's pattern. */
  failed(): void {
    this.silentEnds = 0;
  }

  /** A connection that was up ended; returns how weir knows it was taken over, when it was. */
  ended(end: ConnectionEnd, now = Date.now()): string | undefined {
    if (now - this.connectedAt >= STABLE_MS) this.silentEnds = 0;
    let evidence: string | undefined;
    if (end.by === 'broker' && end.reason === SESSION_TAKEN_OVER) {
      evidence = 'the broker sent DISCONNECT 0x8E (session taken over)';
    } else if (end.by === 'broker' && end.reason === undefined) {
      this.silentEnds++;
      if (this.silentEnds >= SILENT_ENDS)
        evidence = `the broker closed the connection without a reason ${this.silentEnds} times in a row, each time after accepting it (Mosquitto 2.0 closes a taken-over session so)`;
    } else {
      this.silentEnds = 0;
    }
    if (evidence === undefined) return undefined;
    this.takeovers++;
    this.evidence = evidence;
    return evidence;
  }

  /** How long to wait before connecting again after a takeover: grows with each one, up to TAKEN_OVER_POLICY.max_ms. */
  delay(): number {
    return backoffMs(TAKEN_OVER_POLICY, this.takeovers);
  }

  /** Called STABLE_MS after a connection was accepted, if it is still up: the takeover is over. Returns whether one was. */
  stable(): boolean {
    const was = this.evidence !== undefined;
    this.evidence = undefined;
    this.takeovers = 0;
    this.silentEnds = 0;
    return was;
  }
}
