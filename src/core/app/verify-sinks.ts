// What each sink lacks that the rules need, asked of every sink whose type can tell (its
// `verify` hook: tables and columns, topics): `weir check --connect` prints the problems, and
// `weir run` logs them at start, so a missing table is named with its rule file and line before
// any message waits on it. The core knows no sink type; each hook knows its own service.
import type { SinkConfig, WeirConfig } from '../../config/types.js';
import { errorText } from '../../errors.js';
import { redactUrl } from '../../log.js';
import { ruleTestOutputs } from '../../rules/tools/rule-tests.js';
import type { ActionToVerify, VerifyOptions, VerifyProblem } from '../../sinks/types.js';
import { deadLetterPlace } from './dead-letter-place.js';

export interface SinkVerification {
  readonly sink: string;
  /** The problems found; empty when everything is there. */
  readonly problems: readonly VerifyProblem[];
  /** Why the sink could not be asked (unreachable); undefined when it was. */
  readonly unreachable?: string;
  /** False when the sink type has no way to check (nothing was asked). */
  readonly checked: boolean;
}

export async function verifySinks(cfg: WeirConfig, signal: AbortSignal): Promise<SinkVerification[]> {
  const place = deadLetterPlace(cfg);
  const letters = 'sink' in place ? place.sink.name : undefined;
  const actions = new Map<string, ActionToVerify[]>();
  for (const rule of cfg.rules) {
    if (!rule.enabled) continue;
    const samples = rule.actions.length ? await ruleTestOutputs(rule.compiled, rule.tests ?? [], rule.id) : [];
    for (const a of rule.actions) {
      const list = actions.get(a.sink) ?? [];
      list.push({
        ruleId: rule.id,
        at: `${rule.file}:${a.lineOf([])}`,
        atKey: (path) => `${rule.file}:${a.lineOf(path)}`,
        settings: a.settings,
        samples: samples.map((s) => ({ ...s, ruleId: rule.id })),
      });
      actions.set(a.sink, list);
    }
  }
  return Promise.all(
    [...cfg.sinks.values()].map((s) => verifyOne(s, actions.get(s.name) ?? [], { deadLetters: s.name === letters, sink: s.name, broker: cfg.broker }, signal)),
  );
}

async function verifyOne(s: SinkConfig, actions: ActionToVerify[], opts: VerifyOptions, signal: AbortSignal): Promise<SinkVerification> {
  if (!s.sinkType.verify) return { sink: s.name, problems: [], checked: false };
  try {
    return { sink: s.name, problems: await s.sinkType.verify(s.settings, actions, opts, signal), checked: true };
  } catch (err) {
    return { sink: s.name, problems: [], unreachable: redactUrl(errorText(err)), checked: true };
  }
}
