// What a replica says about itself on its presence topic, and the decisions every member draws
// from the same view of them: whether a leaving replica is the last, and who adopts an orphan.
// Pure: no I/O, so every member computes the same answer from the same records.
//
// The record is retained on <topic_prefix>/<share_group>/members/<client_id>:
//
//   { "state": "live", "client_id": "weir-1", "sessions": ["weir-1-0", "weir-1-1"], "connections": 2,
//     "incarnation": "5f3a…", "pid": 7, "host": "weir-1", "version": "0.1.0", "time": "2026-…",
//     "adopting": ["weir-2"] }
//
// States: live (taking its share), leaving (SIGTERM seen, deciding), stopped (exited keeping its
// sessions: the last member), gone (its will: the presence connection dropped and did not come
// back within the will delay). A member that drained, or was adopted, clears its topic (an empty
// retained message), so the view holds only members whose sessions may still exist.

export const MEMBER_STATES = ['live', 'leaving', 'stopped', 'gone'] as const;
export type MemberState = (typeof MEMBER_STATES)[number];

export interface MemberRecord {
  readonly state: MemberState;
  readonly client_id: string;
  /** Client ids of its ingest sessions: `<client_id>-<i>`, i < connections. */
  readonly sessions: readonly string[];
  readonly connections: number;
  /** Random per process: tells this process's records from an earlier one's (a will, say). */
  readonly incarnation: string;
  readonly pid: number;
  readonly host: string;
  readonly version: string;
  readonly time: string;
  /** Members whose sessions this one is adopting now. */
  readonly adopting?: readonly string[];
  /** With `leaving`: the nonce its own echo is recognised by. */
  readonly nonce?: string;
  /** With `leaving`, once decided: whether it drains or keeps its sessions (leaveDecision, drainConfirmed). */
  readonly decision?: 'drain' | 'keep';
}

/** The topic a member announces itself on, and the filter that reads them all. */
export function memberTopic(prefix: string, group: string, clientId: string): string {
  return `${prefix}/${group}/members/${clientId}`;
}

export function membersFilter(prefix: string, group: string): string {
  return `${prefix}/${group}/members/+`;
}

/** A record from the broker, or undefined for an empty (cleared) or foreign payload. */
export function parseRecord(payload: Buffer): MemberRecord | undefined {
  if (!payload.length) return undefined;
  try {
    const r = JSON.parse(payload.toString()) as Partial<MemberRecord>;
    if (typeof r.client_id !== 'string' || !MEMBER_STATES.includes(r.state as MemberState)) return undefined;
    const connections = Number.isInteger(r.connections) && (r.connections as number) > 0 ? (r.connections as number) : 0;
    const sessions = Array.isArray(r.sessions) ? r.sessions.filter((s): s is string => typeof s === 'string') : [];
    return { ...r, connections, sessions } as MemberRecord;
  } catch {
    return undefined;
  }
}

/** The view: client id → its latest record (a cleared topic removes it). */
export type MemberView = ReadonlyMap<string, MemberRecord>;

/** Members taking their share now, by client id. */
export function liveMembers(view: MemberView): string[] {
  return [...view.values()]
    .filter((r) => r.state === 'live')
    .map((r) => r.client_id)
    .sort();
}

/**
 * At SIGTERM, once this member's own `leaving` came back from the broker: drain when another
 * member is live (it takes the share), keep the sessions otherwise (a full stop queues at the
 * broker). `view` is the view when the echo arrived. On a broker that delivers in the order it
 * processed (Mosquitto), every `leaving` processed before this one has been seen then: of members
 * terminated together, only the last one processed keeps its sessions. MQTT orders only per
 * publisher and topic (5.0, 4.6): a broker could show each of two the other one still live, and
 * drainConfirmed is what stops both draining then.
 */
export function leaveDecision(view: MemberView, self: string): { decision: 'drain' | 'keep'; others: string[] } {
  const others = liveMembers(view).filter((id) => id !== self);
  return { decision: others.length ? 'drain' : 'keep', others };
}

/**
 * A tentative drain, checked again after the settle time (fleet.ts, LEAVE_SETTLE_MS) and before
 * anything is undone: confirmed only while another member still takes the share: live, or keeping
 * its sessions (decided `keep`, or `stopped`), so that the share queues somewhere. Members that all
 * drained tentatively see each other `drain` here and all keep: nothing lost, sessions adopted later.
 */
export function drainConfirmed(view: MemberView, self: string): { confirmed: boolean; holders: string[] } {
  const holders = [...view.values()]
    .filter((r) => r.client_id !== self && (r.state === 'live' || r.state === 'stopped' || (r.state === 'leaving' && r.decision === 'keep')))
    .map((r) => r.client_id)
    .sort();
  return { confirmed: holders.length > 0, holders };
}

/** Members whose sessions nobody holds: gone (will) or stopped (kept its sessions as the last). */
export function orphans(view: MemberView): MemberRecord[] {
  return [...view.values()].filter((r) => r.state === 'gone' || r.state === 'stopped');
}

/**
 * Who adopts `orphan`: the live member that says it is adopting it already, otherwise the live
 * member with the lowest client id. Every member computes the same from the same view.
 */
export function adopterOf(view: MemberView, orphan: string): string | undefined {
  const live = liveMembers(view);
  return live.find((id) => view.get(id)?.adopting?.includes(orphan)) ?? live[0];
}

/** The client ids of a member's ingest sessions, as weir names them (core/mqtt-session.ts). */
export function sessionIds(clientId: string, connections: number): string[] {
  return Array.from({ length: connections }, (_, i) => `${clientId}-${i}`);
}
