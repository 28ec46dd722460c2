// The state of one evaluation, passed to every compiled closure. Kept to a few fields so that
// creating one per message costs next to nothing.
import type { MessageContext, RuleEvent } from '../types.js';

export class Scope {
  readonly event: RuleEvent;

  constructor(
    readonly ctx: MessageContext,
    readonly ruleId: string,
    /** Values written by aliases (and the FOREACH item), by the slot the compiler gave them. */
    readonly slots: unknown[],
    /** Results of asynchronous calls (jsonata()) already settled, for the re-run that uses them. */
    readonly settled: SettledCalls | undefined,
  ) {
    this.event = ctx.event;
  }
}

/** Asynchronous call results of one evaluation, in call order (see compile-call.ts). */
export interface SettledCalls {
  next: number;
  readonly results: { args: unknown[]; value: unknown; error: unknown }[];
}

/** Thrown by an asynchronous call whose result is not settled yet: await it, then re-run. */
export class PendingCall {
  constructor(readonly promise: Promise<void>) {}
}
