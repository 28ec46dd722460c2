// What /rules shows: every running rule with its counters, and the last rejected reload next to
// the files it was rejected for. A reload is all or nothing, so after a broken edit the old rule
// keeps running; without this, /rules said `running` and nothing about the edit that did not
// take (the log said it once).
import type { ConfigError } from '../../errors.js';
import type { LiveRule } from '../path/pipeline.js';

/** The last reload that was rejected, until one succeeds. */
export interface ReloadFailure {
  readonly at: number;
  readonly errors: readonly ConfigError[];
}

export function ruleStatus(rules: readonly LiveRule[], failure: ReloadFailure | undefined): unknown[] {
  const byFile = new Map<string, string[]>();
  for (const e of failure?.errors ?? []) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e.message]);
  const at = failure ? new Date(failure.at).toISOString() : '';
  const reloadError = (file: string) => {
    const errors = byFile.get(file);
    return errors ? { reload_error: { at, errors } } : {};
  };
  const running = rules.map((r) => ({
    id: r.cfg.id,
    state: 'running',
    file: r.cfg.file,
    [r.cfg.sql !== undefined ? 'sql' : 'jsonata']: r.cfg.source,
    filters: r.cfg.compiled.filters,
    actions: r.cfg.actions.map((a) => a.sink),
    counters: Object.fromEntries(Object.entries(r.counters).map(([k, t]) => [k, t.value])),
    ...reloadError(r.cfg.file),
  }));
  // A new file that was rejected, or the rules directory itself: nothing of it runs.
  const files = new Set(rules.map((r) => r.cfg.file));
  const rejected = [...byFile.keys()].filter((f) => !files.has(f)).map((file) => ({ file, state: 'rejected', ...reloadError(file) }));
  return [...running, ...rejected];
}
