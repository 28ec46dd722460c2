// Regular expressions on RE2 (re2js, src/rules/functions/linear-regex.ts) beside JavaScript's RegExp, and
// what the evaluation budget (src/rules/compile/budget.ts) costs a message (docs/benchmarks.md,
// "Regular expressions and the evaluation budget"). In one run, alternating the two sides:
//   calls     ns per call of regex_match / regex_extract / regex_replace on typical telemetry
//             patterns: RegExp directly, RE2 directly, and weir's function (cache + admission);
//   blow-up   `^(a+)+$` over n a's and a '!': RegExp's time doubling per character, RE2's flat;
//   work      ns per unit of work (input length × program size) on RE2's slow paths, which
//             sets LIMITS.maxRegexWork;
//   budget    ns per message of SQL rules (SELECT, FOREACH over 10 and 1,000 elements) on this
//             tree and, when WEIR_BASE names a checkout without the budget (e.g. /work/main),
//             on that one; and the budget's own parts (start and end of an evaluation, one
//             check), from which its cost per message follows.
//
//   taskset -c 1 node --import tsx bench/regex.ts            (about 2 minutes; figures are CPU time)
//   WEIR_BASE=/work/main taskset -c 1 node --import tsx bench/regex.ts
import { RE2JS } from 're2js';
import { checkBudget, endEvaluation, resumeEvaluation, startEvaluation } from '../src/rules/compile/budget.js';
import { FUNCTIONS } from '../src/rules/functions/all.js';
import { compileSql, createMessageContext } from '../src/rules/index.js';
import { machine, printTable, writeResult } from './report.js';

const ROUNDS = 5;

/**
 * This process's CPU time in ns (user + system): on a shared VM it leaves out the time the
 * process waited for a core, which wall time counts (1 µs resolution: time rounds, not calls).
 */
function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1_000;
}

/** Median CPU ns per call of `f` over ROUNDS rounds of `n` calls, after one round of warm-up. */
function nsPerCall(f: () => unknown, n: number): number {
  const times: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const t0 = cpuNs();
    for (let i = 0; i < n; i++) f();
    const ns = (cpuNs() - t0) / n;
    if (r > 0) times.push(ns);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const fn = (name: string) => FUNCTIONS.get(name)!.fn;
const round = (x: number, d = 0) => Number(x.toFixed(d));

// --- calls -----------------------------------------------------------------------------------
const LOG_LINE = 'ts=2024-12-05T10:00:00Z dev=pump-17 level=info msg="pressure nominal" p=3.2 t=21.5 fw=1.4.2 uptime=86400 rssi=-67';
const CALLS: { what: string; kind: 'match' | 'extract' | 'replace'; pattern: string; input: string; flags?: string }[] = [
  { what: 'device id', kind: 'match', pattern: '^sensor-[0-9]+$', input: 'sensor-12345' },
  { what: 'level in a log line', kind: 'match', pattern: '(?i)level=(error|warn)', input: LOG_LINE, flags: 'i' },
  { what: 'date fields', kind: 'extract', pattern: '(\\d{4})-(\\d{2})-(\\d{2})', input: '2024-12-05T10:00:00Z' },
  { what: 'topic level', kind: 'extract', pattern: '^device/([^/]+)/telemetry$', input: 'device/ab-12/telemetry' },
  { what: 'number in text', kind: 'extract', pattern: '(-?\\d+\\.\\d+)', input: 'temp=23.5C' },
  { what: 'sanitise', kind: 'replace', pattern: '[^a-zA-Z0-9]', input: 'device/ab-12/telemetry' },
  { what: 'key=value in a log line', kind: 'replace', pattern: '(\\w+)=', input: LOG_LINE },
];

function nativeCall(c: (typeof CALLS)[number]): () => unknown {
  const src = c.pattern.replace(/^\(\?i\)/, '');
  const one = new RegExp(src, `u${c.flags ?? ''}`);
  const all = new RegExp(src, `gu${c.flags ?? ''}`);
  if (c.kind === 'match') return () => one.test(c.input);
  if (c.kind === 'extract') return () => one.exec(c.input)?.slice(1);
  return () => c.input.replace(all, '<$&>');
}

function re2Call(c: (typeof CALLS)[number]): () => unknown {
  const re = RE2JS.compile(c.pattern);
  if (c.kind === 'match') return () => re.test(c.input);
  if (c.kind === 'extract') return () => re.exec(c.input)?.slice(1);
  return () => re.matcher(c.input).replaceAll('<$&>');
}

function weirCall(c: (typeof CALLS)[number]): () => unknown {
  if (c.kind === 'match') return () => fn('regex_match')(c.input, c.pattern);
  if (c.kind === 'extract') return () => fn('regex_extract')(c.input, c.pattern);
  return () => fn('regex_replace')(c.input, c.pattern, '<&>');
}

const calls = CALLS.map((c) => {
  const native = nsPerCall(nativeCall(c), 50_000);
  const re2 = nsPerCall(re2Call(c), 50_000);
  const weir = nsPerCall(weirCall(c), 50_000);
  return {
    case: `${c.kind}: ${c.what}`,
    pattern: c.pattern,
    input_chars: c.input.length,
    regexp_ns: round(native),
    re2_ns: round(re2),
    weir_ns: round(weir),
    weir_vs_regexp: round(weir / native, 1),
  };
});
process.stdout.write('\nCPU ns per call (median of 5 rounds of 50,000 calls)\n');
printTable(calls);

// --- blow-up ---------------------------------------------------------------------------------
const blowUp: { n: number; regexp_ms: number | string; re2_ms: number }[] = [];
const re2Nested = RE2JS.compile('^(a+)+$');
for (const n of [18, 20, 22, 24, 36, 1_000, 100_000]) {
  const s = `${'a'.repeat(n)}!`;
  let regexpMs: number | string = 'not run (exponential)';
  if (n <= 24) {
    const t0 = cpuNs();
    /^(a+)+$/.test(s);
    regexpMs = round((cpuNs() - t0) / 1e6, 1);
  }
  const t1 = cpuNs();
  re2Nested.test(s);
  re2Nested.exec(s);
  blowUp.push({ n, regexp_ms: regexpMs, re2_ms: round((cpuNs() - t1) / 1e6, 2) });
}
process.stdout.write("\n^(a+)+$ over n a's and a '!', CPU ms (RE2: test and exec)\n");
printTable(blowUp);

// --- work ------------------------------------------------------------------------------------
const WORK = [
  { pattern: '^(a+)+$', input: 'a' },
  { pattern: '(a|aa)+$', input: 'a' },
  { pattern: '(\\w+\\s?)+$', input: 'ab ' },
  { pattern: '(.*a){20}', input: 'a' },
  { pattern: '(.*a){50}', input: 'a' },
  { pattern: '(?:(.a*?){20}){0,20}$', input: 'a a' },
];
const work = WORK.map(({ pattern, input }) => {
  const re = RE2JS.compile(pattern);
  const size = re.programSize();
  const s = input.repeat(Math.ceil(1_000_000 / size / input.length)).slice(0, Math.ceil(1_000_000 / size));
  const units = s.length * size;
  // Each on a fresh compile (its DFA cache cold, as for a pattern met for the first time), compile not timed.
  const time = (f: (fresh: RE2JS) => unknown) => {
    const fresh = RE2JS.compile(pattern);
    const t0 = cpuNs();
    f(fresh);
    return (cpuNs() - t0) / units;
  };
  const test = time((r) => r.test(s));
  const extract = time((r) => r.matcher(s).find());
  fn('regex_replace')('x', pattern, '&'); // weir's cache then holds the compiled pattern
  const replace = time(() => fn('regex_replace')(s, pattern, '&'));
  return {
    pattern,
    program: size,
    chars: s.length,
    test_ns_per_unit: round(test, 1),
    extract_ns_per_unit: round(extract, 1),
    replace_ns_per_unit: round(replace, 1),
  };
});
const worst = Math.max(...work.flatMap((w) => [w.test_ns_per_unit, w.extract_ns_per_unit, w.replace_ns_per_unit]));
process.stdout.write('\nCPU ns per unit of work (chars x program size), 1,000,000 units each, first call (DFA cache cold)\n');
printTable(work);
process.stdout.write(`worst: ${worst} ns per unit\n`);

// --- budget ----------------------------------------------------------------------------------
const RULES = [
  { what: 'SELECT, no regex', sql: 'SELECT payload.temp AS t, clientid AS d FROM "t/#" WHERE payload.temp > 0', payload: { temp: 21.5 } },
  { what: 'SELECT regex_match', sql: `SELECT payload.s AS s FROM "t/#" WHERE regex_match(payload.s, '^sensor-[0-9]+$')`, payload: { s: 'sensor-12345' } },
  { what: 'FOREACH 10', sql: 'FOREACH payload.arr AS x DO x.v AS v FROM "t/#"', payload: { arr: Array.from({ length: 10 }, (_, v) => ({ v })) } },
  { what: 'FOREACH 1000', sql: 'FOREACH payload.arr AS x DO x.v AS v FROM "t/#"', payload: { arr: Array.from({ length: 1000 }, (_, v) => ({ v })) } },
];

type Rules = { compileSql: typeof compileSql; createMessageContext: typeof createMessageContext };
const trees: [string, Rules][] = [['this tree', { compileSql, createMessageContext }]];
if (process.env.WEIR_BASE) trees.push([process.env.WEIR_BASE, (await import(`${process.env.WEIR_BASE}/src/rules/index.ts`)) as Rules]);

const budget = RULES.map((r) => {
  const row: Record<string, unknown> = { rule: r.what };
  const runs = trees.map(([, t]) => {
    const rule = t.compileSql(r.sql);
    const body = JSON.stringify(r.payload);
    // A fresh context per message, as the pipeline makes: the payload is decoded once per message.
    return () => rule.evaluate(t.createMessageContext({ topic: 't/1', payload: body, clientid: 'c', qos: 1 } as never), 'r');
  });
  const n = r.what.includes('1000') ? 2_000 : 100_000;
  const medians = runs.map(() => [] as number[]);
  for (let k = 0; k < 3; k++) {
    for (const [i, f] of runs.entries()) medians[i]!.push(nsPerCall(f, n));
  }
  trees.forEach(([name], i) => {
    row[`${name} ns/msg`] = round(medians[i]!.sort((a, b) => a - b)[1]!);
  });
  if (trees.length === 2) row.ratio = round((row[`${trees[0]![0]} ns/msg`] as number) / (row[`${trees[1]![0]} ns/msg`] as number), 2);
  return row;
});
// The budget's own parts: what every evaluation pays (start and end), and one check (a clock read).
const clock = nsPerCall(() => performance.now(), 1_000_000);
const startEnd = nsPerCall(() => {
  startEvaluation();
  endEvaluation();
}, 10_000_000);
resumeEvaluation(1e12); // a deadline this measurement cannot reach
const check = nsPerCall(() => checkBudget('bench'), 1_000_000);
endEvaluation();
const parts = {
  performance_now_ns: round(clock, 1),
  start_end_ns: round(startEnd, 1),
  check_ns: round(check, 1),
  foreach_10_ns: round(startEnd, 1),
  foreach_1000_ns: round(startEnd + Math.floor(1000 / 32) * check, 1),
};
process.stdout.write('\nrules, CPU ns per message (3 alternated passes, the middle of their medians)\n');
printTable(budget);
process.stdout.write(
  `the budget's parts: start and end of an evaluation ${parts.start_end_ns} ns, a check ${parts.check_ns} ns (performance.now() ${parts.performance_now_ns} ns); ` +
    `so per message: SELECT or FOREACH over up to 31 elements ${parts.foreach_10_ns} ns, FOREACH over 1,000 ${parts.foreach_1000_ns} ns (31 checks)\n`,
);

writeResult('regex', { machine: machine(), calls, blow_up: blowUp, work, worst_ns_per_unit: worst, budget, budget_parts: parts });
