// Whether an mqtt action republishes into its own rule's FROM: on the broker weir reads from, each
// republished message would come back to the rule, and again. weir check refuses such an action
// unless it says allow_loop: true.
//
// A topic template's placeholders are unknown until a message renders them, so the check asks
// whether some rendering could match a FROM filter: a level with a placeholder stands for any
// level its literal parts allow (`dev-${id}` for any level starting `dev-`), and `${topic}` (the
// source topic itself) for any number of levels. It errs on the side of reporting a loop.
import { stripShare } from '../../rules/topic.js';
import type { BrokerConfig } from '../../config/schema.js';
import type { ActionContext, SettingProblem } from '../types.js';
import type { MqttAction, MqttConfig } from './spec.js';

/** One level of a topic template: a literal, a pattern with placeholders, or any number of levels. */
type Level = { kind: 'literal'; text: string } | { kind: 'pattern'; re: RegExp } | { kind: 'levels' };

const PLACEHOLDER = /\$\{([^}]*)\}/g;

function templateLevels(template: string): Level[] {
  return template.split('/').map((level): Level => {
    if (!level.includes('${')) return { kind: 'literal', text: level };
    if (/^\$\{\s*topic\s*\}$/.test(level)) return { kind: 'levels' };
    const parts = level.split(PLACEHOLDER);
    // split with a capture group: literal, name, literal, name, …, literal
    const source = parts.map((p, i) => (i % 2 === 1 ? '[^/]*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
    return { kind: 'pattern', re: new RegExp(`^${source}$`) };
  });
}

/** Could a topic rendered from `t` (levels from i) match filter levels `f` (from j)? */
function overlaps(t: Level[], i: number, f: string[], j: number): boolean {
  if (j === f.length) return i === t.length || t.slice(i).every((l) => l.kind === 'levels');
  if (f[j] === '#') return true;
  if (i === t.length) return false;
  const level = t[i]!;
  if (level.kind === 'levels') {
    // One or more levels: stop here, or take one more filter level and stay.
    return overlaps(t, i + 1, f, j + 1) || overlaps(t, i, f, j + 1);
  }
  const fl = f[j]!;
  if (fl !== '+') {
    if (level.kind === 'literal' ? level.text !== fl : !level.re.test(fl)) return false;
  }
  return overlaps(t, i + 1, f, j + 1);
}

/** Whether a topic rendered from `template` could match `filter` (a FROM filter, $share prefix allowed). */
export function couldMatch(filter: string, template: string): boolean {
  const f = stripShare(filter).split('/');
  const t = templateLevels(template);
  // A filter starting with a wildcard does not match topics starting with $.
  if ((f[0] === '+' || f[0] === '#') && t[0]?.kind === 'literal' && t[0].text.startsWith('$')) return false;
  return overlaps(t, 0, f, 0);
}

/** Whether the sink publishes to the broker weir reads from. */
function sameBroker(sink: MqttConfig, broker: BrokerConfig | undefined): boolean {
  if (sink.url === undefined) return true;
  if (broker === undefined) return false;
  const a = new URL(sink.url);
  const b = new URL(broker.url);
  return a.hostname === b.hostname && (a.port || '1883') === (b.port || '1883') && a.protocol === b.protocol;
}

export function lintMqttAction(action: MqttAction, ctx: ActionContext<MqttConfig>): SettingProblem[] {
  if (action.allow_loop || !sameBroker(ctx.sink, ctx.broker)) return [];
  const hit = ctx.filters.find((f) => couldMatch(f, action.topic));
  if (hit === undefined) return [];
  return [
    {
      path: ['topic'],
      value: action.topic,
      code: 'config.republish_loop',
      message: `republishes into a topic that the rule's own FROM "${hit}" matches, on the broker weir reads from: every output would come back to the rule. Publish elsewhere, or write allow_loop: true if that is intended (the rule's WHERE must then stop the loop)`,
    },
  ];
}
