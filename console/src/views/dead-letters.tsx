// Dead letters: the store's letters, filtered by rule, sink, reason and time; one shown with its
// payload as text or hex; replay (write it again through its sink) and purge, as `weir dlq` does,
// each asked twice before it runs. Payloads need payload access, replay and purge write access.
import { useState } from 'preact/hooks';
import type { LetterAction, LetterActionResult, LetterDetail, LetterList } from '../../../src/core/app/console/api.js';
import { useAccess } from '../access.js';
import { messageOf, postJson } from '../api.js';
import { count, hexDump, json, time } from '../format.js';
import { actionFilter, EMPTY, type Filter, letterQuery } from '../letter-filter.js';
import { usePoll } from '../poll.js';
import { AccessNote, Loading, Problem, Section } from '../ui.js';

export function DeadLettersView() {
  const access = useAccess();
  const allowed = access?.payloads === true;
  const [draft, setDraft] = useState<Filter>(EMPTY);
  const [filter, setFilter] = useState<Filter>(EMPTY);
  const list = usePoll<LetterList>(allowed ? `dead-letters?${letterQuery(filter)}` : null, 5000);
  const [open, setOpen] = useState<string | undefined>();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [asking, setAsking] = useState<{ verb: 'replay' | 'purge'; body: LetterAction; what: string } | undefined>();
  const [outcome, setOutcome] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  if (!access) return <p class="muted">Loading…</p>;
  if (!allowed) return <AccessNote access={access} need="payloads" what="Dead letters are" />;

  const letters = list.data?.letters ?? [];
  const field = (k: keyof Filter, label: string, type: 'text' | 'number' | 'datetime-local' = 'text') => (
    <label class="field">
      {label}
      <input
        name={k}
        // Preact's types tie the other attributes to one literal type; these three take the same ones.
        type={type as 'text'}
        value={String(draft[k])}
        onInput={(e) => setDraft({ ...draft, [k]: k === 'limit' ? Math.max(1, Number(e.currentTarget.value) || 100) : e.currentTarget.value })}
      />
    </label>
  );
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (!next.delete(id)) next.add(id);
    setSelected(next);
  };
  const run = async () => {
    if (!asking) return;
    setError(undefined);
    try {
      const r = await postJson<LetterActionResult>(`dead-letters/${asking.verb}`, asking.body);
      setOutcome(
        `${asking.verb}: ${count(r.done)} done, ${count(r.failed)} failed${r.detail.length ? ` (${r.detail.map((d) => `${d.id}: ${d.outcome}`).join('; ')})` : ''}`,
      );
      setSelected(new Set());
    } catch (err) {
      setError(messageOf(err));
    }
    setAsking(undefined);
    list.refresh();
  };
  const ask = (verb: 'replay' | 'purge', body: LetterAction, what: string) => {
    setOutcome(undefined);
    setAsking({ verb, body, what });
  };

  return (
    <div class="view" data-view="dead-letters">
      <Section title="Filter">
        <form
          class="form row"
          onSubmit={(e) => {
            e.preventDefault();
            setFilter(draft);
            setSelected(new Set());
          }}
        >
          {field('rule', 'rule')}
          {field('sink', 'sink')}
          {field('reason', 'reason')}
          {field('since', 'since', 'datetime-local')}
          {field('until', 'until', 'datetime-local')}
          {field('limit', 'at most', 'number')}
          <button type="submit">Show</button>
        </form>
      </Section>
      <Section
        title={list.data ? `${count(list.data.total)} letter${list.data.total === 1 ? '' : 's'} in ${list.data.store}` : 'Letters'}
        right={list.data && list.data.total > letters.length ? <span class="muted small">showing {letters.length}</span> : null}
      >
        <Problem error={list.error ?? error} />
        <AccessNote access={access} need="writes" what="Replay and purge are" />
        {access.writes && letters.length > 0 ? (
          <div class="row actions-bar">
            <button type="button" disabled={selected.size === 0} onClick={() => ask('replay', { ids: [...selected] }, `${selected.size} selected`)}>
              Replay selected
            </button>
            <button
              type="button"
              class="danger"
              disabled={selected.size === 0}
              onClick={() => ask('purge', { ids: [...selected] }, `${selected.size} selected`)}
            >
              Purge selected
            </button>
            <button type="button" onClick={() => ask('replay', { filter: actionFilter(filter) }, `all ${count(list.data?.total ?? 0)} matching the filter`)}>
              Replay all
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => ask('purge', { filter: actionFilter(filter) }, `all ${count(list.data?.total ?? 0)} matching the filter`)}
            >
              Purge all
            </button>
          </div>
        ) : null}
        {asking ? (
          <div class="confirm" role="alertdialog" data-confirm={asking.verb}>
            <span>
              {asking.verb === 'purge' ? 'Purge (delete for good)' : 'Replay (write again through its sink)'} {asking.what}?
            </span>
            <button type="button" class={asking.verb === 'purge' ? 'danger' : ''} onClick={run}>
              Yes, {asking.verb}
            </button>
            <button type="button" onClick={() => setAsking(undefined)}>
              Cancel
            </button>
          </div>
        ) : null}
        {outcome ? (
          <p class="note" data-outcome>
            {outcome}
          </p>
        ) : null}
        {!list.data && !list.error ? <Loading what="the dead letters" /> : null}
        {list.data && letters.length === 0 ? <p class="muted">No dead letters match.</p> : null}
        <ul class="letters">
          {letters.map((l) => (
            <li key={l.id} data-letter={l.id} class={open === l.id ? 'open' : ''}>
              <div class="letter-head">
                {access.writes ? <input type="checkbox" aria-label={`select ${l.id}`} checked={selected.has(l.id)} onChange={() => toggle(l.id)} /> : null}
                <button type="button" class="link" onClick={() => setOpen(open === l.id ? undefined : l.id)}>
                  <span class="mono">{l.rule}</span> → <span class="mono">{l.sink}</span> · {l.reason}
                </button>
                <span class="muted small">{time(l.at)}</span>
                {l.replayed ? <span class="badge ok">replayed {l.replayed}</span> : null}
              </div>
              <div class="small">
                <span class="mono">{l.topic}</span>: {l.error}
              </div>
              {open === l.id ? <Letter id={l.id} /> : null}
            </li>
          ))}
        </ul>
      </Section>
    </div>
  );
}

function Letter({ id }: { id: string }) {
  const { data, error } = usePoll<LetterDetail>(`dead-letters/${encodeURIComponent(id)}`, 60_000);
  const [as, setAs] = useState<'text' | 'hex'>('text');
  if (!data) return error ? <Problem error={error} /> : <Loading what="the letter" />;
  const text = data.payload_text;
  const shown = as === 'text' && text !== undefined ? text : hexDump(data.payload_hex);
  return (
    <div class="letter" data-letter-detail={id}>
      <div class="row">
        <label>
          <input type="radio" name={`as-${id}`} checked={as === 'text'} disabled={text === undefined} onChange={() => setAs('text')} /> text
        </label>
        <label>
          <input type="radio" name={`as-${id}`} checked={as === 'hex' || text === undefined} onChange={() => setAs('hex')} /> hex
        </label>
        {text === undefined ? <span class="muted small">not UTF-8: shown as hex</span> : null}
      </div>
      <pre class="code" data-payload={as === 'text' && text !== undefined ? 'text' : 'hex'}>
        {shown}
      </pre>
      {data.record !== undefined ? (
        <details>
          <summary>record</summary>
          <pre class="code">{json(data.record)}</pre>
        </details>
      ) : null}
    </div>
  );
}
