// `npm run faults -- --fleet`: the fleet scenarios at full size (200,000 messages per scenario at
// 2,000 msg/s or more, the full stop 60 s) on every broker, one broker at a time. Prints the table
// and writes it, with its command, date and machine, as the section FLEET_HEADING of
// docs/reliability.md (replaced when there, appended otherwise; the rest of the file is kept).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { sharedPostgres } from '../harness/postgres.js';
import { ROOT } from '../harness/weir.js';
import {
  cannotRun,
  FLEET_BROKER_LABEL,
  FLEET_BROKERS,
  FLEET_SCENARIOS,
  fleetNotes,
  fleetTable,
  fleetVerdict,
  NODE_LOSS_LIMIT_S,
  runFleetScenario,
  startFleetBroker,
  type FleetBrokerName,
  type FleetRow,
} from './fleet-scenarios.js';

export const FLEET_HEADING = '## A fleet under an orchestrator (issue 31)';

export async function runFleetSuite(o: { size: string | undefined; rate: string | undefined; only?: string; brokers?: string; out: string }): Promise<number> {
  const size = Number(o.size ?? 200_000);
  const rate = Number(o.rate ?? 2_400);
  const only = o.only?.split(',');
  const brokers = (o.brokers?.split(',') ?? FLEET_BROKERS) as FleetBrokerName[];
  const bad = [...(only ?? []).filter((n) => !FLEET_SCENARIOS.some((s) => s.name === n)), ...brokers.filter((b) => !FLEET_BROKERS.includes(b))];
  if (!Number.isInteger(size) || size < 1 || !(rate > 0) || bad.length) {
    process.stderr.write(
      `usage: npm run faults -- --fleet [--size N] [--rate R] [--only ${FLEET_SCENARIOS.map((s) => s.name).join('|')}[,…]] [--brokers ${FLEET_BROKERS.join('|')}[,…]]\n`,
    );
    return 2;
  }
  const command = `npm run faults -- ${process.argv.slice(2).join(' ')}`.trim();
  const started = new Date();
  const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  const pg = (await sharedPostgres()).url;
  const rows: FleetRow[] = [];
  for (const name of brokers) {
    const broker = await startFleetBroker(name);
    try {
      for (const s of FLEET_SCENARIOS.filter((x) => !only || only.includes(x.name))) {
        const why = cannotRun(s, name);
        if (why) {
          rows.push({ scenario: s.name, broker: name, verdict: why });
          continue;
        }
        try {
          const r = await runFleetScenario(s, broker, pg, { size, rate, log });
          rows.push({ scenario: s.name, broker: name, result: r, verdict: fleetVerdict(s, r) });
        } catch (err) {
          rows.push({ scenario: s.name, broker: name, verdict: `FAIL: ${(err as Error).message.split('\n')[0]}` });
        }
        log(`${s.name} on ${name}: ${rows.at(-1)!.verdict}`);
      }
    } finally {
      await broker.dispose();
    }
  }

  const text = `${FLEET_HEADING}

weir replicas in one share group, driven as a Kubernetes StatefulSet drives them
(test/faults/orchestrator.ts): ordinals 0..n-1 with client ids \`<set>-<ordinal>\`; termination is
the kubelet's (SIGTERM, SIGKILL after the grace period); scale-down removes the highest ordinal
first, each after the previous exited; scale-up and rolling updates wait for /readyz; node loss is
SIGKILL and never back. weir runs as shipped: plain \`weir run\`, no fleet setting. Devices publish
a steady QoS 1 stream, every message with a unique (device, seq), for as long as the orchestrator
acts (at least the size below); every scenario ends with \`weir reconcile --sequence\` over the
whole run. The scenarios and their expectations are in test/faults/fleet-scenarios.ts;
test/faults/fleet.test.ts runs them in CI at 6,000-12,000 messages and 1,000 msg/s (the full
stop 10 s instead of 60 s).

- lost: acknowledged by the broker, never stored. duplicates stored: rows beyond one per (device,
  seq) (the rule's \`ON CONFLICT (device_id, ts, seq) DO NOTHING\`). duplicates delivered: rows weir
  committed again for a (device, seq) it had committed before, counted by a BEFORE INSERT trigger
  ahead of the conflict clause, in the same transaction.
- event → last stored: from the scenario's first action to the last row committed (the stream goes
  on meanwhile, so this is at least the rest of the stream). longest delay: the most any message
  took from its publication to its row's commit (a full stop's length, a lost node's wait).
- sessions left: sessions on the broker under a client id whose pod does not run (after the
  scale-down in scale-3-1-3, at the end elsewhere): a non-destructive probe reads CONNACK's
  session-present flag. A node loss's share must be stored within ${NODE_LOSS_LIMIT_S} s (longest delay).
- Brokers: ${brokers.map((b) => FLEET_BROKER_LABEL[b]).join('; ')}, each with persistence.

- Command: \`${command}\` (${size.toLocaleString('en')} messages per scenario at least, target ${rate.toLocaleString('en')} msg/s)
- Date: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round((Date.now() - started.getTime()) / 60_000)} min in all
- Machine: ${availableParallelism()} cores (shared with other work), Node ${process.version}; weir runs from source (tsx), PostgreSQL with fsync off

${fleetTable(rows)}

${fleetNotes(rows)}
`;
  const out = resolve(ROOT, o.out);
  const before = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const at = before.indexOf(`\n${FLEET_HEADING}\n`);
  let next = at < 0 ? -1 : before.slice(at + 1 + FLEET_HEADING.length).search(/^## /m);
  if (next >= 0) next += at + 1 + FLEET_HEADING.length;
  const written = at < 0 ? `${before.trimEnd()}\n\n${text}` : `${before.slice(0, at + 1)}${text}${next >= 0 ? `\n${before.slice(next)}` : ''}`;
  writeFileSync(out, written);
  process.stdout.write(`\n${fleetTable(rows)}\n\n${fleetNotes(rows)}\n\nwritten to ${o.out}\n`);
  return rows.every((r) => r.verdict === 'pass') ? 0 : 1;
}
