// The rule engine's public contract. The engine is a pure library: it knows nothing of MQTT,
// sinks or I/O. The core builds a RuleEvent per message and asks each matching rule for outputs.

/** The fields EMQX exposes to a rule about one published message (EMQX 5 `message.publish`). */
export interface RuleEvent {
  id?: string;
  clientid?: string;
  username?: string;
  topic: string;
  qos?: number;
  flags?: { retain?: boolean; dup?: boolean };
  /** The raw payload as published. */
  payload: Buffer | string;
  peerhost?: string;
  /** Milliseconds since the epoch. */
  timestamp?: number;
  publish_received_at?: number;
  pub_props?: Record<string, unknown>;
  node?: string;
  event?: string;
}

/** One output record of a rule: the SELECT's fields (or one FOREACH item's). */
export type OutputRecord = Record<string, unknown>;

/**
 * One message as the rules see it. Created once per message and shared by every rule that the
 * message reaches, so the payload is JSON-decoded at most once.
 */
export interface MessageContext {
  readonly event: RuleEvent;
  /** The payload decoded as JSON; `undefined` when it is not JSON. Decoded on first call only. */
  decodedPayload(): unknown;
}

export type EvalResult =
  /** FROM or WHERE did not match: the rule was not hit. */
  | { matched: false }
  /** The rule was hit and produced 0..n records (0 only for FOREACH). */
  | { matched: true; outputs: OutputRecord[] };

export interface CompiledRule {
  /** The topic filters of the FROM clause, as written (`device/+/telemetry`). */
  readonly filters: readonly string[];
  /** True when evaluate may return a Promise (JSONata); SQL without jsonata() is synchronous. */
  readonly async: boolean;
  /** Evaluates one message. Throws (or rejects with) a RuleEvalError on an evaluation error. */
  evaluate(ctx: MessageContext, ruleId: string): EvalResult | Promise<EvalResult>;
  /**
   * evaluate without its FROM check, for a caller that has already matched the topic against
   * `filters` with the same MQTT matching (the pipeline's router, src/core/path/router.ts): with 100
   * rules the check was a second walk of the topic through the rule's own matcher per message.
   */
  evaluateRouted(ctx: MessageContext, ruleId: string): EvalResult | Promise<EvalResult>;
}
