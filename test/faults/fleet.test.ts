// The fleet scenarios (fleet-scenarios.ts) at CI size, on each broker: Mosquitto 2.0.21 and
// HiveMQ CE all seven, Mosquitto 2.0.11 (Debian 12's) all but the broker restart, which it is said
// not to run (it drops $share subscriptions on restart), not skipped in silence. At CI size the
// stream is 1,000 msg/s and the full stop lasts 10 s; `npm run faults -- --fleet` runs 2,000 msg/s,
// 200,000 messages per scenario and a 60 s stop. Each scenario's figures and the whole suite's time
// are printed at the end.
import { after, before, describe, test } from 'node:test';
import { sharedPostgres } from '../harness/postgres.js';
import {
  cannotRun,
  FLEET_BROKERS,
  FLEET_SCENARIOS,
  fleetNotes,
  fleetPass,
  fleetTable,
  fleetVerdict,
  runFleetScenario,
  startFleetBroker,
  type FleetBroker,
  type FleetRow,
} from './fleet-scenarios.js';

const rows: FleetRow[] = [];
const t0 = Date.now();
after(() => {
  const at = (r: FleetRow) => FLEET_BROKERS.indexOf(r.broker) * 100 + FLEET_SCENARIOS.findIndex((s) => s.name === r.scenario);
  rows.sort((a, b) => at(a) - at(b));
  process.stdout.write(`\n# fleet suite, CI size, ${Math.round((Date.now() - t0) / 1000)} s in all\n${fleetTable(rows)}\n${fleetNotes(rows)}\n`);
});

for (const name of FLEET_BROKERS) {
  describe(name, () => {
    let broker: FleetBroker;
    before(async () => {
      broker = await startFleetBroker(name);
    });
    after(() => broker?.dispose());
    for (const s of FLEET_SCENARIOS) {
      const why = cannotRun(s, name);
      test(`${s.name}: ${s.title}`, { timeout: 600_000, skip: why }, async (t) => {
        const r = await runFleetScenario(s, broker, (await sharedPostgres()).url, { ci: true, log: (l) => t.diagnostic(l) });
        rows.push({ scenario: s.name, broker: name, result: r, verdict: fleetVerdict(s, r) });
        t.diagnostic(
          `published ${r.published} (${r.rate}/s), stored ${r.stored}, lost ${r.lost}, duplicates stored ${r.duplicates}, delivered ${r.deliveredDuplicates}, event → last stored ${r.eventToLastStoredS} s, longest delay ${r.maxDelayS} s, reconcile exit ${r.reconcile.code}, ${r.seconds} s`,
        );
        fleetPass(r);
        s.check?.(r);
      });
      if (why) rows.push({ scenario: s.name, broker: name, verdict: why });
    }
  });
}
