// Picking one of the running rules (Try it, Trace): the ids come from /api/rules, asked again only
// every 30 s (a reload may add or remove one), and the first is chosen until the user picks.
import { useState } from 'preact/hooks';
import type { RuleView } from '../../src/core/app/console/api.js';
import { usePoll } from './poll.js';

export interface RuleChoice {
  readonly ids: readonly string[];
  /** The picked rule, or the first one; '' while there is none. */
  readonly chosen: string;
  readonly pick: (id: string) => void;
}

export function useRuleChoice(enabled: boolean): RuleChoice {
  const rules = usePoll<RuleView[]>(enabled ? 'rules' : null, 30_000);
  const [picked, pick] = useState('');
  const ids = rules.data?.map((r) => r.id) ?? [];
  return { ids, chosen: ids.includes(picked) ? picked : (ids[0] ?? ''), pick };
}

export function RuleSelect({ choice }: { choice: RuleChoice }) {
  return (
    <label class="field">
      rule
      <select name="rule" value={choice.chosen} onChange={(e) => choice.pick(e.currentTarget.value)}>
        {choice.ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );
}
