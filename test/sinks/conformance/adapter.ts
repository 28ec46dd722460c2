// What the sink conformance suite (test/sinks/conformance.int.test.ts) needs to know of one sink
// type, and nothing more: where a fresh target lives on the real service, how to read back what
// it holds, which record it refuses, and a service of the test's own that can be stopped. A new
// sink type adds one file like postgres.ts beside this one and a line in ADAPTERS.

/** A service the test started itself, so that stopping it breaks no other test of the run. */
export interface OwnService {
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

/** A fresh target (a table, a topic) that no other test writes to. */
export interface Target {
  /** The sink's own settings (`sinks.<name>` without type, batch, retry, max_in_flight). */
  readonly settings: Record<string, unknown>;
  /** A rule action writing each record, with its `seq`, to the target. */
  readonly action: Record<string, unknown>;
  /**
   * The `seq` of every item the target holds, duplicates included, read by a client of the
   * service's own (not weir's). Waits until `expected` distinct ones are there or 60 s pass.
   */
  stored(expected: number): Promise<number[]>;
}

export interface SinkAdapter {
  /** A target on the run's shared service. */
  target(): Promise<Target>;
  /** A service of the test's own, for the outage case, with a target on it. */
  ownService(): Promise<{ service: OwnService; target: Target }>;
  /** A record this sink refuses for good (a value its column cannot hold, a message over the limit). */
  rejectable(seq: number): Record<string, unknown>;
  /** What the refusal's error says (the dead letter's `error`). */
  readonly rejection: RegExp;
}

/** A record every sink stores. */
export function goodRecord(seq: number): Record<string, unknown> {
  return { seq, dev: `dev-${seq % 5}`, temp: 20 + (seq % 10) / 10 };
}
