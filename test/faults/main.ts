// npm run faults [-- --size N] [--only NAME,…] [--seed N] [--settle-s S]: the fault suite at full
// size (200,000 messages per scenario unless told), on services this process starts through the
// harness. Prints the table and writes it to docs/reliability.md; exits 1 when a scenario's
// expectation failed. --settle-s: how long weir may take after the stream to account for every
// message (default 60 s + 1 s per 2,000 messages), for a machine shared with other work: a stalled
// weir still ends as 'timed out', only later.
//
// npm run faults -- --fleet [--size N] [--rate R] [--only NAME,…] [--brokers NAME,…]: the fleet
// scenarios instead (fleet-main.ts), written to their own section of docs/reliability.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { sharedPostgres } from '../harness/postgres.js';
import { ROOT } from '../harness/weir.js';
import { notes, rowOf, table, type Row } from './report.js';
import { runScenario } from './scenario.js';
import { SCENARIOS } from './scenarios.js';

const { values: v } = parseArgs({
  options: {
    size: { type: 'string', default: '200000' },
    only: { type: 'string' },
    seed: { type: 'string' },
    'settle-s': { type: 'string' },
    out: { type: 'string', default: 'docs/reliability.md' },
    fleet: { type: 'boolean' },
    rate: { type: 'string' },
    brokers: { type: 'string' },
  },
});
if (v.fleet) {
  const { runFleetSuite } = await import('./fleet-main.js');
  process.exit(await runFleetSuite({ size: v.size, rate: v.rate, only: v.only, brokers: v.brokers, out: v.out! }));
}
const size = Number(v.size);
const settleMs = v['settle-s'] === undefined ? undefined : Number(v['settle-s']) * 1000;
const only = v.only?.split(',');
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (!Number.isInteger(size) || size < 1 || unknown.length || (settleMs !== undefined && !(settleMs > 0))) {
  process.stderr.write(`usage: npm run faults -- [--size N] [--only ${SCENARIOS.map((s) => s.name).join('|')}[,…]] [--seed N] [--settle-s S]\n`);
  process.exit(2);
}
const chosen = SCENARIOS.filter((s) => !only || only.includes(s.name));
const command = `npm run faults -- ${process.argv.slice(2).join(' ')}`.trim();

const started = new Date();
const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const services = { mqttUrl: (await sharedMosquitto()).url, pgUrl: (await sharedPostgres()).url };
const rows: Row[] = [];
for (const s of chosen) {
  try {
    const o = await runScenario(s, services, { size, seed: v.seed === undefined ? undefined : Number(v.seed), settleMs, log });
    rows.push(rowOf(s, o));
  } catch (err) {
    rows.push({ scenario: s.name, broker: s.broker ?? 'mosquitto', verdict: `FAIL: ${(err as Error).message.split('\n')[0]}` });
  }
  log(`${s.name}: ${rows.at(-1)!.verdict}`);
}

const text = `# Reliability under faults

What weir does when things break, measured from outside. Each scenario runs weir as its own
process against a real broker and PostgreSQL, publishes a paced QoS 1 stream in which every
message has a unique (device, seq), injects one fault, waits until weir has acked everything, and
accounts for every message the broker acknowledged: stored (distinct (device_id, seq) in
\`telemetry\`), dead-lettered (\`weir_dead_letter\` and the fallback file, matched to messages by
their payload), or lost. Duplicates are rows beyond one per (device_id, seq). The scenarios and
their expectations are in test/faults/scenarios.ts; test/faults/faults.test.ts runs each in CI at
a few thousand messages.

hostile-payloads also checks what is stored, not only where each message ended: its rule writes a
table of its own (instead of \`telemetry\`) whose columns are named as event fields and as weir's
old internal counter (\`seq\`, \`id\`, \`timestamp\`, \`topic\`), and every stored row is compared, value for
value, with the message of its (device, seq) by an oracle that reads the payload alone
(test/harness/hostile.ts, RowOracle): a selected field the payload lacks must be NULL (issue 28).

A broker scenario may lose messages by design and pass: Mosquitto 2.0 does not restore \`$share\`
subscriptions across a restart, so what is published between the broker's start and weir's
SUBSCRIBE goes to nobody (tens of ms while weir runs; everything until weir starts again in the
backlog scenario, where weir is stopped). Such a scenario passes only if \`weir reconcile
--sequence\` exits 1 and names the missing count; docs/operations.md (broker restarts) says how to
configure Mosquitto so that nothing is lost.

- Command: \`${command}\` (${size.toLocaleString('en')} messages per scenario)
- Date: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round((Date.now() - started.getTime()) / 60_000)} min in all
- Machine: ${availableParallelism()} cores (shared with other work), Node ${process.version}; weir runs from source (tsx), PostgreSQL with fsync off

${table(rows)}

${notes(rows)}
`;
// The measured table replaces the top of the file; the sections below it (`## …`, written by hand
// with their own commands and figures) are kept, or a full run would erase them.
const out = resolve(ROOT, v.out!);
const before = existsSync(out) ? readFileSync(out, 'utf8') : '';
const kept = before.search(/^## /m);
writeFileSync(out, kept >= 0 ? `${text}\n${before.slice(kept)}` : text);
process.stdout.write(`\n${table(rows)}\n\n${notes(rows)}\n\nwritten to ${v.out}\n`);
process.exit(rows.every((r) => r.verdict === 'pass') ? 0 : 1);
