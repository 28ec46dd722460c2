// The dead-letter filter of the page's form, as the list's query string and as a replay or purge
// selection (the API takes times as epoch milliseconds; the form has local date-times).
import type { LetterAction } from '../../src/core/app/console/api.js';

export interface Filter {
  rule: string;
  sink: string;
  reason: string;
  since: string;
  until: string;
  limit: number;
}

export const EMPTY: Filter = { rule: '', sink: '', reason: '', since: '', until: '', limit: 100 };

/** The list's query string: only the fields set; times from the form's local date-time. */
export function letterQuery(f: Filter): string {
  const q = new URLSearchParams();
  if (f.rule) q.set('rule', f.rule);
  if (f.sink) q.set('sink', f.sink);
  if (f.reason) q.set('reason', f.reason);
  if (f.since) q.set('since', String(new Date(f.since).getTime()));
  if (f.until) q.set('until', String(new Date(f.until).getTime()));
  q.set('limit', String(f.limit));
  return q.toString();
}

export function actionFilter(f: Filter): NonNullable<LetterAction['filter']> {
  return {
    ...(f.rule ? { rule: f.rule } : {}),
    ...(f.sink ? { sink: f.sink } : {}),
    ...(f.reason ? { reason: f.reason } : {}),
    ...(f.since ? { since: new Date(f.since).getTime() } : {}),
    ...(f.until ? { until: new Date(f.until).getTime() } : {}),
  };
}
