// The console's read-only views (GET /api/overview, /api/rules, /api/sinks): the runtime's
// counters as api.ts shapes them, read in one synchronous pass like a scrape of /metrics, so a
// view and a scrape taken with no message in between agree to the unit.
import { VERSION } from '../../../version.js';
import type { LiveRule } from '../../path/pipeline.js';
import type { Access, Overview, RuleView, SinkView } from './api.js';
import type { ConsoleDeps } from './deps.js';

export function overview(d: ConsoleDeps, access: Access): Overview {
  const latest = d.history.latest();
  const m = d.metrics;
  return {
    version: VERSION,
    started_at: d.startedAt,
    now: Date.now(),
    access,
    connections: d.connections.sessions.map((s) => ({
      client_id: s.clientId,
      connected: s.connected,
      session_present: s.sessionPresent,
      unacked: m.ingestUnacked.labels(s.clientId).value,
      max_unacked: d.cfg.broker.max_unacked,
    })),
    messages_in_per_s: latest?.messages_in ?? 0,
    rows_out_per_s: latest?.rows_out ?? 0,
    dead_letters_total: m.deadLetters.total(),
    rss_bytes: process.memoryUsage.rss(),
    cpu: latest?.cpu ?? 0,
    history: d.history.points(),
  };
}

export function rules(d: ConsoleDeps): RuleView[] {
  const failure = d.reloadFailure();
  const byFile = new Map<string, string[]>();
  for (const e of failure?.errors ?? []) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e.message]);
  const reloadError = (file: string) => {
    const errors = byFile.get(file);
    return failure && errors ? { reload_error: { at: failure.at, errors } } : {};
  };
  const live = d.pipeline.liveRules;
  const running = live.map(
    (r): RuleView => ({
      id: r.cfg.id,
      state: 'running',
      file: r.cfg.file,
      language: r.cfg.sql !== undefined ? 'sql' : 'jsonata',
      source: r.cfg.source,
      filters: r.cfg.compiled.filters,
      actions: r.cfg.actions.map((a) => a.sink),
      counters: countersOf(r),
      rate: d.history.ruleRate(r.cfg.id),
      spark: d.history.ruleSpark(r.cfg.id),
      ...(r.lastError ? { last_error: r.lastError } : {}),
      ...reloadError(r.cfg.file),
    }),
  );
  // A rejected new file (or the rules directory itself): nothing of it runs.
  const files = new Set(live.map((r) => r.cfg.file));
  const rejected = [...byFile.keys()]
    .filter((f) => !files.has(f))
    .map(
      (file): RuleView => ({
        id: file,
        state: 'rejected',
        file,
        language: 'sql',
        source: '',
        filters: [],
        actions: [],
        counters: ZERO,
        rate: { now: 0, avg_5m: 0, max: 0 },
        spark: [],
        ...reloadError(file),
      }),
    );
  return [...running, ...rejected];
}

export function sinks(d: ConsoleDeps): SinkView[] {
  return [...d.runners.values()].map((r) => {
    const h = r.status;
    let inFlight = 0;
    let queued = 0;
    let retries = 0;
    for (const rule of d.pipeline.liveRules) {
      if (!rule.cfg.actions.some((a) => a.sink === r.name)) continue;
      inFlight += d.metrics.sinkInflight.labels(r.name, rule.cfg.id).value;
      queued += d.metrics.sinkQueuing.labels(r.name, rule.cfg.id).value;
      retries += d.metrics.sinkRetried.labels(r.name, rule.cfg.id).value;
    }
    return {
      name: r.name,
      type: r.cfg.sinkType.type,
      state: h.state,
      ready: h.ready,
      since: Date.parse(h.since),
      ...(r.lastError ? { last_error: r.lastError } : {}),
      in_flight: inFlight,
      queued,
      retries,
      batch_size: r.writes.meanBatch(),
      write_ms: r.writes.latency(),
    };
  });
}

const ZERO: RuleView['counters'] = {
  matched: 0,
  passed: 0,
  failed: 0,
  'failed.exception': 0,
  'failed.no_result': 0,
  'actions.total': 0,
  'actions.success': 0,
  'actions.failed': 0,
};

function countersOf(r: LiveRule): RuleView['counters'] {
  const c = r.counters;
  return {
    matched: c.matched.value,
    passed: c.passed.value,
    failed: c.failed.value,
    'failed.exception': c.failedException.value,
    'failed.no_result': c.failedNoResult.value,
    'actions.total': c.actionsTotal.value,
    'actions.success': c.actionsSuccess.value,
    'actions.failed': c.actionsFailed.value,
  };
}
