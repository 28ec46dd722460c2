// Sinks: each sink's state (up, or down since when, and its last error), what it holds (in flight,
// queued), its batch size and write latency (p50/p99), and how many writes it repeated.
import type { SinkView } from '../../../src/core/app/console/api.js';
import { ago, count, ms, time } from '../format.js';
import { usePoll } from '../poll.js';
import { Badge, Loading, Problem, Stat } from '../ui.js';

export function SinksView() {
  const { data, error } = usePoll<SinkView[]>('sinks', 3000);
  if (!data) return error ? <Problem error={error} /> : <Loading what="the sinks" />;
  return (
    <div class="view" data-view="sinks">
      <Problem error={error} />
      {data.length === 0 ? <p class="muted">No sinks are configured.</p> : null}
      {data.map((s) => (
        <section class="card" key={s.name} data-sink={s.name}>
          <header class="card-head">
            <h2 class="mono">{s.name}</h2>
            <span class="muted">{s.type}</span>
            <Badge tone={s.ready ? 'ok' : 'bad'}>{s.state}</Badge>
          </header>
          <p class="muted small" title={time(s.since)}>
            {s.ready ? 'up' : s.state} since {ago(s.since)}
          </p>
          <div class="stats">
            <Stat id="in_flight" label="in flight" value={count(s.in_flight)} />
            <Stat id="queued" label="queued" value={count(s.queued)} />
            <Stat id="batch_size" label="batch size (5 min)" value={s.batch_size.toFixed(s.batch_size < 10 ? 1 : 0)} />
            <Stat id="write_ms" label="write p50 / p99" value={`${ms(s.write_ms.p50)} / ${ms(s.write_ms.p99)}`} />
            <Stat id="retries" label="retries" value={count(s.retries)} tone={s.retries > 0 ? 'bad' : undefined} />
          </div>
          {s.last_error ? (
            <p class="problem small" title={time(s.last_error.at)}>
              last error {ago(s.last_error.at)}: {s.last_error.message}
            </p>
          ) : null}
        </section>
      ))}
    </div>
  );
}
