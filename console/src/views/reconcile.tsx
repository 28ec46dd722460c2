// Reconcile: the seeds' proof, live. Per rule and sink, hits = stored + dead-lettered + in flight,
// beside the sink's own count where it can count, and the sequence gaps where configured; each
// difference green at 0 and red otherwise, as `weir reconcile` exits 0 or not.
import type { Reconcile, ReconcileRow, SequenceCheck, SequenceChecks } from '../../../src/core/app/console/api.js';
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
        {data.ok
          ? `Every difference is 0: every hit is stored, dead-lettered or in flight${seq?.at !== undefined ? ', and no sequence number is missing' : ''}.`
          : 'A difference is not 0: see the red cells.'}
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
      {seq ? <SequenceSection seq={seq} /> : null}
    </div>
  );
}

/** weir.yaml's console.sequence checks: gaps per key and keys silent at their tail, as `weir reconcile --sequence`. */
function SequenceSection(props: { seq: SequenceChecks }) {
  const { seq } = props;
  return (
    <Section title="Sequence numbers (as weir reconcile --sequence)">
      {seq.error ? (
        <p class="problem" data-sequence-error>
          {seq.error}
        </p>
      ) : null}
      {seq.at === undefined ? (
        <Loading what="the first sequence check" />
      ) : (
        <div class="scroll">
          <table class="table" data-table="sequence">
            <thead>
              <tr>
                <th>table:key:seq</th>
                <th class="num">keys</th>
                <th class="num">rows</th>
                <th class="num">missing</th>
                <th class="num">keys with gaps</th>
                <th class="num">stale keys</th>
                <th class="num">missing at the tail (est.)</th>
              </tr>
            </thead>
            <tbody>
              {seq.checks.map((c: SequenceCheck) => (
                <tr key={c.spec} data-row={c.spec}>
                  <td class="mono">{c.spec}</td>
                  <td class="num">{count(c.keys)}</td>
                  <td class="num">{count(c.rows)}</td>
                  <Diff value={c.missing} name="sequence_missing" />
                  <td class="num">{count(c.keys_with_gaps)}</td>
                  <Diff value={c.stale?.keys} name="stale_keys" />
                  <td class="num">{c.stale ? count(c.stale.missing) : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {seq.checks.flatMap((c) => [
            ...c.worst.map((k) => (
              <p class="small mono" key={`${c.spec}/gap/${k.key}`}>
                {c.spec} · {k.key ?? 'NULL'}: {count(k.missing)} missing, first {k.first_missing.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ')}
              </p>
            )),
            ...(c.stale?.stalest ?? []).map((k) => (
              <p class="small mono" key={`${c.spec}/stale/${k.key}`}>
                {c.spec} · {k.key ?? 'NULL'}: silent {k.silence_s} s, {k.interval_s} s per message, about {count(k.missing)} missing
              </p>
            )),
          ])}
          <p class="muted small">checked at {time(seq.at)}</p>
        </div>
      )}
    </Section>
  );
}
