// The evaluation budget: how long one evaluation of a SQL rule may run before its message fails
// with rule.limit. Synchronous JavaScript cannot be interrupted, so the budget is checked where
// work repeats — every 32nd FOREACH element, each regular expression over a long input, each jq
// call — and every single step between two checks is bounded by the limits of limits.ts (sizes,
// the regex work limit). An evaluation therefore ends within about its budget plus one step.
//
// The clock is read lazily: a rule whose evaluation reaches no check (the common SELECT over a
// small payload) never reads it, and one that does pays one performance.now() (about 50 ns on the
// 2-core VM, bench/regex.mjs) per check. Evaluations are synchronous, so one deadline for the
// process is enough: each evaluation (each run of an asynchronous rule) starts it afresh.
import { RuleEvalError } from '../errors.js';
import { LIMITS } from '../limits.js';

/** When the current evaluation must end (performance.now() time), 0 before its first check, -1 outside an evaluation. */
let deadline = -1;

/** A new evaluation: its clock starts at its first check. */
export function startEvaluation(): void {
  deadline = 0;
}

/** The evaluation is over: a function called outside one (a constant folded at compile time, a benchmark) has no budget. */
export function endEvaluation(): void {
  deadline = -1;
}

/** A further run of an asynchronous rule (one per settled jsonata() call), with what is left of its budget. */
export function resumeEvaluation(leftMs: number): void {
  deadline = performance.now() + leftMs;
}

/** Milliseconds left to the current evaluation (its whole budget before the first check). */
export function budgetLeft(): number {
  return deadline <= 0 ? LIMITS.evaluationBudgetMs : deadline - performance.now();
}

/** Fails the evaluation with rule.limit once it has run past its budget; `what` names the step. */
export function checkBudget(what: string): void {
  if (deadline < 0) return;
  const now = performance.now();
  if (deadline === 0) deadline = now + LIMITS.evaluationBudgetMs;
  else if (now > deadline) throw overBudget(what);
}

export function overBudget(what: string): RuleEvalError {
  return new RuleEvalError('rule.limit', `${what}: the evaluation ran past its budget of ${LIMITS.evaluationBudgetMs} ms`);
}
