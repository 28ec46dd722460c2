// Rules: each rule's counters under EMQX's names (the rule statistics of its dashboard, and
// weir_rule_* on /metrics), matched per second now, over 5 minutes and at most, a sparkline of the
// history, its SQL and actions, its last error and whether the last reload of its file failed.
import type { RuleCountersView, RuleView } from '../../../src/core/app/console/api.js';
import { Sparkline } from '../chart.js';
import { ago, count, rate } from '../format.js';
import { usePoll } from '../poll.js';
import { Badge, Loading, Problem } from '../ui.js';

const COUNTERS: readonly (keyof RuleCountersView)[] = [
  'matched',
  'passed',
  'failed',
  'failed.exception',
  'failed.no_result',
  'actions.total',
  'actions.success',
  'actions.failed',
];

/** Red when above 0: an evaluation error, or an output no action could store. A WHERE that is false (no_result) is not a fault. */
const ALARMING: ReadonlySet<keyof RuleCountersView> = new Set(['failed.exception', 'actions.failed']);

export function RulesView() {
  const { data, error } = usePoll<RuleView[]>('rules', 3000);
  if (!data) return error ? <Problem error={error} /> : <Loading what="the rules" />;
  return (
    <div class="view" data-view="rules">
      <Problem error={error} />
      {data.length === 0 ? <p class="muted">No rules are loaded.</p> : null}
      {data.map((r) => (
        <Rule key={r.id} rule={r} />
      ))}
    </div>
  );
}

function Rule({ rule: r }: { rule: RuleView }) {
  return (
    <section class="card" data-rule={r.id}>
      <header class="card-head">
        <h2 class="mono">{r.id}</h2>
        {r.state === 'running' ? <Badge tone="ok">running</Badge> : <Badge tone="bad">rejected</Badge>}
        {r.reload_error ? <Badge tone="warn">reload failed</Badge> : null}
      </header>
      <p class="muted small">
        {r.file} · {r.language} · from {r.filters.join(', ')}
      </p>
      <div class="rule-rates">
        <Sparkline values={r.spark} width={160} height={32} title={`${r.id}: matched per second`} />
        <span>
          matched / s: now <b>{rate(r.rate.now)}</b> · 5 min <b>{rate(r.rate.avg_5m)}</b> · max <b>{rate(r.rate.max)}</b>
        </span>
      </div>
      <dl class="counters">
        {COUNTERS.map((k) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd data-counter={k} class={ALARMING.has(k) && r.counters[k] > 0 ? 'bad' : undefined}>
              {count(r.counters[k])}
            </dd>
          </div>
        ))}
      </dl>
      {r.last_error ? (
        <p class="problem small">
          last error {ago(r.last_error.at)}: {r.last_error.message}
        </p>
      ) : null}
      {r.reload_error ? (
        <div class="problem small">
          reload {ago(r.reload_error.at)} failed; the rule as shown still runs:
          <ul>
            {r.reload_error.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <details>
        <summary>
          {r.language === 'sql' ? 'SQL' : r.language} and {r.actions.length} action{r.actions.length === 1 ? '' : 's'}
        </summary>
        <pre class="code">{r.source}</pre>
        <ul class="actions-list">
          {r.actions.map((a) => (
            <li key={a} class="mono">
              {a}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
