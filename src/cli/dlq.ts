// weir dlq: the dead letters weir wrote, inspected (list, show), sent back through the current
// rules once the cause is fixed (replay), and deleted (purge). Exit 2 on bad usage, 1 when the
// store cannot be read or something is left unstored.
import type { WeirConfig } from '../config/types.js';
import { narrows, type LetterFilter, type LetterStore } from '../dead-letters/letter-store.js';
import { openLetterStore } from '../core/app/dead-letter-store.js';
import { replay } from '../core/app/dead-letter-replay.js';
import { errorText } from '../errors.js';
import { createLogger, redactUrl } from '../log.js';
import { CONFIG_HELP, CONFIG_OPTION, numberOption, parse, usageError, type Parsed } from './args.js';
import type { Command } from './command.js';
import { letterJson, letterTable, letterText, replaySummaryText, summaryJson } from './dlq-output.js';
import { loadOrReport, loadSettingsOrReport } from './load-or-report.js';

const HELP = `usage: weir dlq <list|show|replay|purge> [options]

The dead letters weir wrote: in the table of a PostgreSQL sink (dead_letter.sink, or the first
postgres sink) or in the JSON-lines file dead_letter.file, as \`weir run\` chooses.

  list      the letters matching the filters, oldest first
  show ID   one letter in full: its payload, record, error, attempts and replay state
  replay    send the pending letters matching the filters through the current rules and actions
  purge     delete the letters matching the filters

weir dlq <subcommand> --help shows its options. docs/operations.md, "Dead letters", has the
steps from a dead letter to a stored row.
`;

const FILTER_HELP = `${CONFIG_HELP}  --rule ID           letters of this rule
  --sink NAME         letters of this sink (a rule's failure on a message has none)
  --reason REASON     e.g. rejected, invalid_payload, rule_exception, payload_too_large
  --since TIME        received at or after TIME: ISO 8601 (2024-12-03, 2024-12-03T10:00:00Z)
                      or a duration ago (30m, 12h, 7d)
  --until TIME        received before TIME
  --state STATE       pending (not replayed yet) or replayed
  --fallback          the fallback file (dead_letter.fallback_file) instead of the store
`;

const FILTER_OPTIONS = {
  ...CONFIG_OPTION,
  rule: { type: 'string' },
  sink: { type: 'string' },
  reason: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  state: { type: 'string' },
  fallback: { type: 'boolean' },
} as const;

const LIST_HELP = `usage: weir dlq list [filters] [--limit N] [--json]

The letters matching the filters, oldest first: id, when the message was received, rule, sink,
reason, topic, attempts, replay state (pending, or how and when it was replayed) and the error.

${FILTER_HELP}  --limit N           at most N letters (default 100)
  --json              a JSON array instead of the table
`;

const SHOW_HELP = `usage: weir dlq show ID [--config FILE] [--fallback] [--json]

One letter in full: the payload (as text when it is UTF-8, else base64, and says which), the
record (the rule's output, or what the sink was sent), the error, attempts and replay state.

${CONFIG_HELP}  --fallback          look in the fallback file
  --json              one JSON document (payload as text or base64, and always payload_base64)
`;

const REPLAY_HELP = `usage: weir dlq replay [filters] [--rate N/s] [--dry-run]

Sends each pending letter matching the filters back through the current rules and actions of
weir.yaml, in this process, as \`weir run\` would a message: only through the rule that
dead-lettered it, and when a sink refused it only to that rule's actions on that sink. Nothing
is acked to any broker. Each letter is then marked with how it ended: stored, dead_lettered (the
new letter, with attempts + 1 and the new reason, is written with the mark) or no_output (the
rules leave it out now). A marked letter is never replayed again. A letter whose rule is gone,
or no longer reads its topic, is skipped and stays pending.

Exits 0 when every letter replayed was stored, 1 otherwise (the summary says what happened).

${FILTER_HELP}  --rate N            letters per second at most (default 200; also N/s)
  --dry-run           list what would be replayed; write nothing
`;

const PURGE_HELP = `usage: weir dlq purge (filters | --all) [--dry-run]

Deletes the letters matching the filters. At least one filter, or --all, is required.
A file store is rewritten: purge it while weir is stopped (docs/operations.md).

${FILTER_HELP}  --all               every letter
  --dry-run           show what would be deleted; delete nothing
`;

const DEFAULT_LIMIT = 100;
const DEFAULT_RATE = 200;

type Sub = (args: string[]) => Promise<number>;

const SUBCOMMANDS: Record<string, Sub> = { list, show, replay: replayLetters, purge };

export const dlqCommand: Command = {
  summary: 'list, show, replay and purge dead letters',
  async run(args) {
    const [name, ...rest] = args;
    if (name === undefined || name === '--help' || name === '-h') {
      process.stdout.write(HELP);
      return name === undefined ? 2 : 0;
    }
    const sub = SUBCOMMANDS[name];
    if (!sub) return usageError(`unknown subcommand '${name}'`, HELP);
    return sub(rest);
  },
};

async function list(args: string[]): Promise<number> {
  const p = parse(args, { ...FILTER_OPTIONS, limit: numberOption({ unit: 'letters', min: 1, max: 999_999_999 }), json: { type: 'boolean' } }, LIST_HELP);
  if ('exit' in p) return p.exit;
  const filter = filterOf(p.values);
  if (typeof filter === 'string') return usageError(filter, LIST_HELP);
  const limit = p.values.limit ?? DEFAULT_LIMIT;
  return withStore(p.values, async (store) => {
    const letters = await store.list(filter, limit + 1);
    const more = letters.length > limit;
    const shown = letters.slice(0, limit);
    if (p.values.json) {
      process.stdout.write(`${JSON.stringify(shown.map(summaryJson), null, 2)}\n`);
    } else if (shown.length === 0) {
      process.stdout.write(`no dead letters match in ${store.where}\n`);
    } else {
      process.stdout.write(letterTable(shown));
      if (more) process.stdout.write(`showing the first ${limit} of ${await store.count(filter)}: raise --limit or narrow the filters\n`);
    }
    return 0;
  });
}

async function show(args: string[]): Promise<number> {
  const p = parse(args, { ...CONFIG_OPTION, fallback: { type: 'boolean' }, json: { type: 'boolean' } }, SHOW_HELP, true);
  if ('exit' in p) return p.exit;
  if (p.positionals.length !== 1)
    return usageError(p.positionals.length ? `one ID, not ${p.positionals.length}` : 'which letter? give its ID (weir dlq list shows them)', SHOW_HELP);
  const id = p.positionals[0]!;
  return withStore(p.values, async (store) => {
    const letter = await store.get(id);
    if (!letter) {
      process.stderr.write(`error: no dead letter with id '${id}' in ${store.where}\n`);
      return 1;
    }
    process.stdout.write(p.values.json ? `${JSON.stringify(letterJson(letter), null, 2)}\n` : letterText(letter));
    return 0;
  });
}

async function replayLetters(args: string[]): Promise<number> {
  const rateOption = numberOption({ unit: 'letters per second', min: 0, aboveMin: true, fraction: true, suffix: '/s' });
  const p = parse(args, { ...FILTER_OPTIONS, rate: rateOption, 'dry-run': { type: 'boolean' } }, REPLAY_HELP);
  if ('exit' in p) return p.exit;
  const filter = filterOf(p.values);
  if (typeof filter === 'string') return usageError(filter, REPLAY_HELP);
  if (filter.state === 'replayed') return usageError('a replayed letter is never replayed again: --state replayed selects nothing', REPLAY_HELP);
  const rate = p.values.rate ?? DEFAULT_RATE;
  return withStore(
    p.values,
    async (store, cfg) => {
      const pending = { ...filter, state: 'pending' } as const;
      if (p.values['dry-run']) return preview(store, pending, 'would replay');
      const release = await store.lockForReplay();
      const stop = new AbortController();
      const interrupt = () => stop.abort();
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      try {
        const log = createLogger(process.env.WEIR_LOG_LEVEL ?? 'warn', 2);
        const summary = await replay(cfg, store, { filter, rate, signal: stop.signal, log });
        process.stdout.write(summary.selected === 0 ? `nothing to replay: no pending letter matches in ${store.where}\n` : replaySummaryText(summary));
        return summary.stored === summary.selected ? 0 : 1;
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
        await release();
      }
    },
    'needed',
  );
}

async function purge(args: string[]): Promise<number> {
  const p = parse(args, { ...FILTER_OPTIONS, all: { type: 'boolean' }, 'dry-run': { type: 'boolean' } }, PURGE_HELP);
  if ('exit' in p) return p.exit;
  const filter = filterOf(p.values);
  if (typeof filter === 'string') return usageError(filter, PURGE_HELP);
  if (narrows(filter) === Boolean(p.values.all))
    return usageError(p.values.all ? '--all with a filter: give one or the other' : 'purge needs a filter, or --all to delete every letter', PURGE_HELP);
  return withStore(p.values, async (store) => {
    if (p.values['dry-run']) return preview(store, filter, 'would delete');
    const n = await store.purge(filter);
    process.stdout.write(`deleted ${n} dead letter${n === 1 ? '' : 's'} from ${store.where}\n`);
    return 0;
  });
}

/** What a dry run would touch: the count and the first letters. */
async function preview(store: LetterStore, filter: LetterFilter, verb: string): Promise<number> {
  const n = await store.count(filter);
  process.stdout.write(`${verb} ${n} dead letter${n === 1 ? '' : 's'} of ${store.where} (dry run: nothing written)\n`);
  if (n > 0) process.stdout.write(letterTable(await store.list(filter, DEFAULT_LIMIT)) + (n > DEFAULT_LIMIT ? `… and ${n - DEFAULT_LIMIT} more\n` : ''));
  return 0;
}

/**
 * Loads weir.yaml, opens the store, runs `fn`, and turns any error into one line and exit 1.
 * Reading and deleting letters needs only weir.yaml's sinks and dead-letter settings: invalid rule
 * files are warned about, not fatal (a broken rule is when the letters are wanted). Replaying
 * sends letters through the rules, so it needs every rule valid, as `weir run` does.
 */
async function withStore(
  values: { config?: string; fallback?: boolean },
  fn: (store: LetterStore, cfg: WeirConfig) => Promise<number>,
  rules: 'needed' | 'not needed' = 'not needed',
): Promise<number> {
  const cfg = rules === 'needed' ? loadOrReport(values.config) : loadSettingsOrReport(values.config);
  if (!cfg) return 1;
  let store: LetterStore | undefined;
  try {
    store = openLetterStore(cfg, values.fallback ? 'fallback' : 'store');
    const code = await fn(store, cfg);
    if (store.unreadable)
      process.stderr.write(`note: ${store.unreadable} line(s) or record(s) of ${store.where} are not letters (a torn last line?) and were left alone\n`);
    return code;
  } catch (err) {
    process.stderr.write(`error: ${redactUrl(errorText(err))}\n`);
    return 1;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

type FilterValues = Extract<Parsed<typeof FILTER_OPTIONS>, { values: unknown }>['values'];

/** The filter options, or what is wrong with them. */
function filterOf(v: FilterValues, now = Date.now()): LetterFilter | string {
  const since = v.since === undefined ? undefined : parseTime(v.since, now);
  if (since === null) return `--since: '${v.since}' is not a time (ISO 8601 such as 2024-12-03T10:00:00Z, or a duration ago such as 30m, 12h, 7d)`;
  const until = v.until === undefined ? undefined : parseTime(v.until, now);
  if (until === null) return `--until: '${v.until}' is not a time (ISO 8601 such as 2024-12-03T10:00:00Z, or a duration ago such as 30m, 12h, 7d)`;
  if (since !== undefined && until !== undefined && since >= until) return '--since must be before --until';
  if (v.state !== undefined && v.state !== 'pending' && v.state !== 'replayed') return `--state is pending or replayed, not '${v.state}'`;
  return { rule: v.rule, sink: v.sink, reason: v.reason, since, until, state: v.state };
}

const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A date, or a date and time with optional seconds, fraction and zone (no zone: local time, as JavaScript reads it). */
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Epoch ms of an ISO 8601 time or a duration before `now`; null when it is neither. */
export function parseTime(text: string, now: number): number | null {
  const d = DURATION.exec(text.trim());
  if (d) return now - Number(d[1]) * UNIT_MS[d[2]!]!;
  if (!ISO.test(text.trim())) return null;
  const t = Date.parse(text.trim());
  return Number.isFinite(t) ? t : null;
}
