// Overview: the connections, messages in and rows out per second, dead letters, the process's RSS
// and CPU, and the last 15 minutes of them as weir keeps them in memory (HistoryPoint).
import { useEffect } from 'preact/hooks';
import type { Overview } from '../../../src/core/app/console/api.js';
import { noteAccess } from '../access.js';
import { Chart } from '../chart.js';
import { bytes, count, cpu, duration, rate } from '../format.js';
import { usePoll } from '../poll.js';
import { Badge, Loading, Problem, Section, Stat } from '../ui.js';

export function OverviewView() {
  const { data, error } = usePoll<Overview>('overview', 3000);
  const access = data?.access;
  useEffect(() => {
    if (access) noteAccess(access);
  }, [access]);
  if (!data) return error ? <Problem error={error} /> : <Loading what="the overview" />;
  const h = data.history;
  const times = h.map((p) => p.t);
  return (
    <div class="view" data-view="overview">
      <Problem error={error} />
      <div class="stats">
        <Stat id="messages_in_per_s" label="messages in / s" value={rate(data.messages_in_per_s)} />
        <Stat id="rows_out_per_s" label="rows out / s" value={rate(data.rows_out_per_s)} />
        <Stat id="dead_letters_total" label="dead letters" value={count(data.dead_letters_total)} tone={data.dead_letters_total > 0 ? 'bad' : undefined} />
        <Stat id="rss_bytes" label="memory (RSS)" value={bytes(data.rss_bytes)} />
        <Stat id="cpu" label="CPU" value={cpu(data.cpu)} sub="100 % = one core" />
        <Stat id="uptime" label="up" value={duration(data.now - data.started_at)} sub={`weir ${data.version}`} />
      </div>
      <Section title="Last 15 minutes">
        {h.length < 2 ? (
          <p class="muted">The history fills one point every 5 s; the chart starts with the second.</p>
        ) : (
          <>
            <Chart
              label="messages in, rows out and dead letters per second"
              times={times}
              series={[
                { label: 'in / s', color: '#2f7ed8', values: h.map((p) => p.messages_in), format: rate },
                { label: 'rows / s', color: '#2a9d5c', values: h.map((p) => p.rows_out), format: rate },
                { label: 'dead / s', color: '#c92a2a', values: h.map((p) => p.dead_letters), format: rate },
              ]}
            />
            <Chart
              label="process memory and CPU"
              height={150}
              times={times}
              series={[
                { label: 'RSS MiB', color: '#7048e8', values: h.map((p) => p.rss_bytes / 1024 / 1024), format: (v) => v.toFixed(1) },
                { label: 'CPU %', color: '#e8590c', values: h.map((p) => p.cpu * 100), format: (v) => v.toFixed(1), right: true },
              ]}
            />
          </>
        )}
      </Section>
      <Section title={`Connections (${data.connections.length})`}>
        <div class="scroll">
          <table class="table" data-table="connections">
            <thead>
              <tr>
                <th>client id</th>
                <th>state</th>
                <th class="num">unacked / max</th>
                <th>session</th>
              </tr>
            </thead>
            <tbody>
              {data.connections.map((c) => (
                <tr key={c.client_id} data-connection={c.client_id}>
                  <td class="mono">{c.client_id}</td>
                  <td>{c.connected ? <Badge tone="ok">connected</Badge> : <Badge tone="bad">disconnected</Badge>}</td>
                  <td class="num">
                    <span data-counter="unacked">{count(c.unacked)}</span> / {count(c.max_unacked)}
                    <meter min={0} max={Math.max(1, c.max_unacked)} value={c.unacked} />
                  </td>
                  <td>{c.session_present ? 'present' : 'new'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
    </div>
  );
}
