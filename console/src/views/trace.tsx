// Trace: the next N messages of one rule, each step as weir saw it (received → rule output →
// rendered row → stored or dead-lettered), shown as they arrive. weir keeps them in a bounded
// buffer only while a trace runs; the page asks every quarter second while it runs (a message shows
// within a second of being published) and every 5 s otherwise.
import { useState } from 'preact/hooks';
import type { TracedMessage, TraceRequest, TraceState, TraceStep } from '../../../src/core/app/console/api.js';
import { useAccess } from '../access.js';
import { messageOf, postJson } from '../api.js';
import { json, time } from '../format.js';
import { usePoll } from '../poll.js';
import { RuleSelect, useRuleChoice } from '../rule-choice.js';
import { AccessNote, Badge, Problem, Section } from '../ui.js';

const STEP_NAMES: Record<TraceStep['step'], string> = {
  received: 'received',
  output: 'rule output',
  rendered: 'rendered',
  stored: 'stored',
  dead_lettered: 'dead-lettered',
  failed: 'failed',
};

export function TraceView() {
  const access = useAccess();
  const allowed = access?.payloads === true;
  const rules = useRuleChoice(allowed);
  const [fast, setFast] = useState(false);
  const trace = usePoll<TraceState>(allowed ? 'trace' : null, fast ? 250 : 5000);
  const [count, setCount] = useState(10);
  const [error, setError] = useState<string | undefined>();
  const active = trace.data?.active === true;
  if (active !== fast) setFast(active);

  if (!access) return <p class="muted">Loading…</p>;
  if (!allowed) return <AccessNote access={access} need="payloads" what="Traces are" />;
  const chosen = rules.chosen;

  const start = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const req: TraceRequest = { rule: chosen, count };
      await postJson<TraceState>('trace', req);
      setFast(true);
      trace.refresh();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const t = trace.data;
  return (
    <div class="view" data-view="trace">
      <Section title="Trace the next messages of a rule">
        <form class="form row" onSubmit={start}>
          <RuleSelect choice={rules} />
          <label class="field">
            messages
            <input
              name="count"
              type="number"
              min={1}
              max={100}
              value={count}
              onInput={(e) => setCount(Math.min(100, Math.max(1, Number(e.currentTarget.value) || 1)))}
            />
          </label>
          <button type="submit" disabled={!chosen}>
            Start
          </button>
        </form>
        <Problem error={error ?? trace.error} />
      </Section>
      {t?.rule ? (
        <Section title={`${t.rule}: ${t.messages.length} of ${t.wanted}`} right={active ? <Badge tone="ok">tracing</Badge> : <Badge tone="idle">done</Badge>}>
          {t.messages.length === 0 ? <p class="muted">Waiting for the next message of {t.rule}…</p> : null}
          <ol class="trace" data-trace="messages">
            {t.messages.map((m, i) => (
              <Traced key={i} message={m} />
            ))}
          </ol>
        </Section>
      ) : null}
    </div>
  );
}

function Traced({ message: m }: { message: TracedMessage }) {
  const t0 = m.steps[0]?.at ?? 0;
  return (
    <li class="traced" data-topic={m.topic}>
      <div>
        <span class="mono">{m.topic}</span> <span class="muted small">{t0 ? time(t0) : ''}</span>
      </div>
      <pre class="code small">{m.payload_encoding === 'base64' ? `(base64) ${m.payload}` : m.payload}</pre>
      <ul class="steps">
        {m.steps.map((s, i) => (
          <li key={i} class={`step ${s.step}`} data-step={s.step}>
            <span class="step-time">+{(s.at - t0).toFixed(0)} ms</span> <b>{STEP_NAMES[s.step]}</b>
            {s.sink ? <span class="mono"> {s.sink}</span> : null}
            {s.detail !== undefined ? <pre class="code small">{typeof s.detail === 'string' ? s.detail : json(s.detail)}</pre> : null}
          </li>
        ))}
      </ul>
    </li>
  );
}
