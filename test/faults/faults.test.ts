// The fault suite at CI sizes (a few thousand messages per scenario; the PostgreSQL outages keep
// their 30 s and 3 min): every scenario of test/faults/scenarios.ts once, each held to its
// expectation. The broker-restart scenarios start a broker of their own (Mosquitto with
// persistence, HiveMQ CE). Full sizes: `npm run faults`.
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { sharedPostgres } from '../harness/postgres.js';
import { notes, rowOf, table, type Row } from './report.js';
import { runScenario } from './scenario.js';
import { SCENARIOS } from './scenarios.js';

const rows: Row[] = [];
after(() => {
  process.stdout.write(`\n# fault suite, CI sizes\n${table(rows)}\n${notes(rows)}\n`);
});

for (const s of SCENARIOS) {
  test(`${s.name}: ${s.title}`, { timeout: 600_000 }, async (t) => {
    const services = { mqttUrl: (await sharedMosquitto()).url, pgUrl: (await sharedPostgres()).url };
    const o = await runScenario(s, services, { log: (line) => t.diagnostic(line) });
    rows.push(rowOf(s, o));
    t.diagnostic(
      `published ${o.published}, stored ${o.stored}, dead-lettered ${o.deadLettered}, lost ${o.lost}, duplicates ${o.duplicates}, reconcile exit ${o.reconcile.code}, peak RSS ${o.peakRssMb} MB, ${o.seconds} s`,
    );
    s.check(o);
  });
}
