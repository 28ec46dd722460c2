// Named templates rendered to text, the same for every sink that sends name → text pairs with a
// message (Pulsar message properties, MQTT 5 user properties): a value as EMQX's str() prints it,
// a missing or null value left out.
import { compileTemplate } from '../rules/index.js';
import type { OutputRecord, RuleEvent } from '../rules/types.js';
import { toStr } from '../rules/values/to-str.js';

export type TextMap = (record: OutputRecord, event?: RuleEvent) => Record<string, string>;

/** Compiles each template of `map` once; undefined when there are none. */
export function compileTextMap(map: Readonly<Record<string, string>> | undefined): TextMap | undefined {
  const entries = Object.entries(map ?? {}).map(([name, t]) => [name, compileTemplate(t)] as const);
  if (entries.length === 0) return undefined;
  return (record, event) => {
    const out: Record<string, string> = {};
    for (const [name, of] of entries) {
      const v = of(record, event);
      if (v !== undefined && v !== null) out[name] = typeof v === 'string' ? v : toStr(v);
    }
    return out;
  };
}
