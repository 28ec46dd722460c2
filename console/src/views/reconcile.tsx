// Reconcile: the seeds' proof, live. Per rule and sink, hits = stored + dead-lettered + in flight,
// beside the sink's own count where it can count, and the sequence gaps where configured; each
// difference green at 0 and red otherwise, as `weir reconcile` exits 0 or not.
import type { Reconcile, ReconcileRow } from '../../../src/core/app/console/api.js';
import { count, time } from '../format.js';
import { usePoll } from '../poll.js';
import { Loading, Problem, Section } from '../ui.js';

function Diff(props: { value: number | undefined; name: string }) {
  if (props.value === undefined) return <td class="num muted">–</td>;
  return (
    <td class={`num diff ${props.value === 0 ? 'ok' : 'bad'}`} data-counter={props.name}>
      {props.value > 0 ? '+' : ''}
      {count(props.value)}
    </td>
  );
}

export function ReconcileView() {
  const { data, error } = usePoll<Reconcile>('reconcile', 5000);
  if (!data) return error ? <Problem error={error} /> : <Loading what="the reconciliation" />;
  const seq = data.sequence;
  return (
    <div class="view" data-view="reconcile">
      <Problem error={error} />
      <p class={`verdict ${data.ok ? 'ok' : 'bad'}`} data-verdict={data.ok ? 'ok' : 'difference'}>
        {data.ok ? 'Every difference is 0: every hit is stored, dead-lettered or in flight.' : 'A difference is not 0: see the red cells.'}
        <span class="muted small"> at {time(data.at)}</span>
      </p>
      <Section title="hits = stored + dead-lettered + in flight">
        <div class="scroll">
          <table class="table" data-table="reconcile">
            <thead>
              <tr>
                <th>rule</th>
                <th>sink</th>
                <th class="num">hits</th>
                <th class="num">stored</th>
                <th class="num">dead-lettered</th>
                <th class="num">in flight</th>
                <th class="num">difference</th>
                <th class="num">sink's count</th>
                <th class="num">vs stored</th>
              </tr>
            </thead>
            <tbody>
              {data.rows.map((r: ReconcileRow) => (
                <tr key={`${r.rule}\u0000${r.sink}`} data-row={`${r.rule}/${r.sink}`}>
                  <td class="mono">{r.rule}</td>
                  <td class="mono">{r.sink}</td>
                  <td class="num">{count(r.hits)}</td>
                  <td class="num">{count(r.stored)}</td>
                  <td class="num">{count(r.dead_lettered)}</td>
                  <td class="num">{count(r.in_flight)}</td>
                  <Diff value={r.difference} name="difference" />
                  <td class="num">{r.sink_count === undefined ? '–' : count(r.sink_count)}</td>
                  <Diff value={r.sink_difference} name="sink_difference" />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      {seq ? (
        <Section title="Sequence gaps (as weir reconcile --sequence)">
          <p class="mono small">{seq.spec}</p>
          {seq.error ? (
            <p class="problem">{seq.error}</p>
          ) : (
            <p class={`verdict ${seq.gaps === 0 ? 'ok' : 'bad'}`} data-verdict-sequence={seq.gaps === 0 ? 'ok' : 'gaps'}>
              {count(seq.gaps)} gaps, {count(seq.missing)} messages missing
            </p>
          )}
        </Section>
      ) : null}
    </div>
  );
}
