// The fault suite's figures as one Markdown table (printed by the CI test and `npm run faults`,
// written to docs/reliability.md by the latter), and each scenario's verdict from its check.
import type { Scenario, ScenarioResult } from './scenario.js';

/** How `weir reconcile --sequence` names a gap: "GAPS: telemetry: 37 missing sequence numbers over 5 keys". */
export const MISSING = /GAPS: [^\n]*?(\d+) missing sequence number/;

export interface Row {
  scenario: string;
  broker: string;
  /** Missing when the scenario did not run to its measurement (an error). */
  result?: ScenarioResult;
  verdict: string;
}

/** The scenario's expectation applied to its outcome: 'pass' or 'FAIL: …'. */
export function verdictOf(s: Scenario, o: ScenarioResult): string {
  try {
    s.check(o);
    return 'pass';
  } catch (err) {
    return `FAIL: ${(err as Error).message.split('\n')[0]}`;
  }
}

export function rowOf(s: Scenario, o: ScenarioResult): Row {
  return { scenario: o.scenario, broker: o.broker, result: o, verdict: verdictOf(s, o) };
}

/** "exit 0", "exit 1, 37 missing", with "--sequence" when the gap check ran. */
export function reconcileText(r: ScenarioResult): string {
  const missing = MISSING.exec(r.reconcile.output)?.[1];
  return `exit ${r.reconcile.code}${r.reconcile.code !== 0 && missing ? `, ${missing} missing` : ''}${r.reconcile.sequence ? ' (--sequence)' : ''}`;
}

const HEAD = ['scenario', 'broker', 'published', 'stored', 'dead-lettered', 'lost', 'duplicates', 'reconcile', 'weir peak RSS MB', 'duration s', 'result'];

export function table(rows: Row[]): string {
  const cells = rows.map((row) => {
    const r = row.result;
    if (!r) return [row.scenario, row.broker, '-', '-', '-', '-', '-', '-', '-', '-', row.verdict];
    return [r.scenario, r.broker, r.published, r.stored, r.deadLettered, r.lost, r.duplicates, reconcileText(r), r.peakRssMb, r.seconds, row.verdict].map(
      String,
    );
  });
  const line = (c: string[]) => `| ${c.map((x) => x.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(HEAD), `|${HEAD.map((_, i) => (i >= 2 && i <= 9 && i !== 7 ? ' ---: ' : ' --- ')).join('|')}|`, ...cells.map(line)].join('\n');
}

/** Each scenario's notes (fault points, seeds, reconcile's words), one bullet per scenario. */
export function notes(rows: Row[]): string {
  return rows
    .filter((r) => r.result?.notes.length)
    .map((r) => `- ${r.scenario}: ${r.result!.notes.join('; ')}${r.result!.settled === 'accounted' ? '' : `; waiting ended: ${r.result!.settled}`}`)
    .join('\n');
}
