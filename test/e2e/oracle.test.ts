// A content oracle, not only counts (issue 28): generated rules over generated payloads, through
// weir as a process, real Mosquitto and real PostgreSQL, and every stored row checked against
// what the message alone says it must be.
//
// - Rules (oracle-gen.ts): SELECT with aliases that collide with event fields (`topic`, `id`,
//   `timestamp`, `clientid`, `qos`, `payload`…) and with internal-looking names (`seq`,
//   `decoded`, `raw`, `constructor`, `__proto__`), nested paths and targets, `*`, FOREACH with and
//   without DO; each has its own topic filter and table, 1-5 columns of text, jsonb, bigint,
//   double, numeric, boolean or timestamptz (some NOT NULL), each filled by a generated template
//   (a bare `${name.path}`, or `${…}` inside text, or none), through the unnest or the values
//   insert.
// - Payloads: maps with missing and null fields, arrays and scalars at the root, `{}`, text that is
//   not JSON, numbers at the edges (2^53 + 1, -0, 1e308, 30-digit decimals), astral unicode, NUL,
//   strings that hold JSON.
// - The oracle: `weir eval` (the rule engine alone) gives each message's output records; a
//   renderer of its own (oracle-values.ts, which shares no code with src/rules/compile/template.ts or
//   the sink) applies the template semantics, and PostgreSQL's input functions convert the
//   parameter text to each column's type in a session of the test's. Every stored row must be one
//   the oracle produces for its message (the key column `${topic}`, or `${clientid}`, ties rows to
//   messages), every refused row a dead letter with the server's error, every message that the
//   rule fails on a `rule_exception` letter, and nothing else stored.
// - weir's event `id` and receive `timestamp` cannot be computed from the message: a rule never
//   computes with them, templates read them only bare (`${id}`, `${timestamp}`,
//   `${publish_received_at}`), and such a cell is checked by a predicate instead: the time lies in
//   the round's publish window (±2 s), the id is 22 hex digits and no two messages share one.
//
// Size: WEIR_ORACLE_CASES (default 3,000) messages, each through one rule, in rounds of up to
// 12,000 (one weir process, one database, ~200 rules each). WEIR_ORACLE_SEED repeats a run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { sharedPostgres } from '../harness/postgres.js';
import { compareRound, evalLines, type Mismatch } from './oracle-compare.js';
import { payloadArb, ruleArb } from './oracle-gen.js';
import { type PlannedRule, runRound, weirEval } from './oracle-round.js';

const CASES = Number(process.env.WEIR_ORACLE_CASES ?? 3000);
const SEED = Number(process.env.WEIR_ORACLE_SEED ?? Date.now() % 2 ** 31);
const PER_RULE = 60;
const PER_ROUND = 12_000;

test(`content oracle: ${CASES} generated rule × payload cases, every stored row as the message says`, { timeout: 90_000 + CASES * 20 }, async () => {
  process.stdout.write(`# oracle seed ${SEED} (WEIR_ORACLE_SEED=${SEED} WEIR_ORACLE_CASES=${CASES} to repeat)\n`);
  const { url: mqttUrl } = await sharedMosquitto();
  const { url: adminPgUrl } = await sharedPostgres();
  const started = Date.now();
  const mismatches: Mismatch[] = [];
  let cases = 0;
  let rows = 0;
  let letters = 0;
  for (let round = 0; cases < CASES; round++) {
    const n = Math.min(PER_ROUND, CASES - cases);
    const tag = `${SEED.toString(36)}r${round}`;
    const generated = fc.sample(fc.tuple(ruleArb, fc.array(payloadArb, { minLength: PER_RULE, maxLength: PER_RULE })), {
      numRuns: Math.ceil(n / PER_RULE),
      seed: SEED + round,
    });
    let left = n;
    const plan: PlannedRule[] = generated.map(([rule, payloads], i) => {
      const take = Math.min(PER_RULE, left);
      left -= take;
      return { id: `r${i}`, rule, payloads: payloads.slice(0, take) };
    });
    const lines = plan.map((p) => evalLines(tag, p));
    const evalStarted = Date.now();
    const answers = await weirEval(lines.flat().flat());
    const evalSeconds = (Date.now() - evalStarted) / 1000;
    const evalOut = new Map(plan.map((p, i) => [p.id, lines[i]!.map((): [string, string] => [answers.shift()!, answers.shift()!])]));
    const stored = await runRound({ tag, plan, mqttUrl, adminPgUrl });
    const compareStarted = Date.now();
    const v = await compareRound(tag, plan, evalOut, stored);
    const t = { eval: evalSeconds, ...stored.timings, compare: (Date.now() - compareStarted) / 1000 };
    cases += v.cases;
    rows += v.rows;
    letters += v.letters;
    mismatches.push(...v.mismatches);
    process.stdout.write(
      `# round ${round}: ${v.cases} cases over ${plan.length} rules, ${v.rows} rows, ${v.letters} dead letters, ${v.mismatches.length} mismatches\n`,
    );
    process.stdout.write(`# round ${round} dead letters: ${JSON.stringify(v.reasons)}; seconds: ${JSON.stringify(t)}\n`);
  }
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`# oracle: ${cases} cases, ${rows} rows, ${letters} dead letters, ${mismatches.length} mismatches in ${seconds.toFixed(1)} s\n`);
  const kinds: Record<string, number> = {};
  for (const m of mismatches) kinds[m.what] = (kinds[m.what] ?? 0) + 1;
  // One mismatch per rule, the shortest rule and payload first: the smallest cases to read.
  const perRule = new Map<string, Mismatch>();
  for (const m of mismatches) {
    const k = m.sql.replace(/oracle\/[^"]*/, '');
    const had = perRule.get(k);
    if (!had || m.payload.length < had.payload.length) perRule.set(k, m);
  }
  const shown = [...perRule.values()]
    .sort((a, b) => a.sql.length + a.payload.length - (b.sql.length + b.payload.length))
    .slice(0, 6)
    .map((m) => JSON.stringify(m))
    .join('\n');
  assert.equal(mismatches.length, 0, `seed ${SEED}: ${mismatches.length} mismatches ${JSON.stringify(kinds)}; the smallest:\n${shown}`);
});
