// npm run demo: weir on the shipped weir.yaml and rules/, against a throwaway Mosquitto and
// PostgreSQL started on free loopback ports (Debian's packages, installed when missing and run as
// root), with simulated devices publishing the seeds' telemetry. Prints a live line of counters
// until Ctrl-C. The same code path as production: only the endpoints differ.
import { join } from 'node:path';
import { publishLoad } from './load/publisher.js';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { freePort, startService, waitFor } from '../test/harness/process.js';
import { parseMetrics, ROOT } from '../test/harness/weir.js';
import { countRows } from '../test/e2e/fixtures.js';

const DEVICES = Number(process.env.DEMO_DEVICES ?? 100);

const mq = await startMosquitto();
const server = await startPostgres();
const pgUrl = await freshDatabase(server.url, 'weir_demo');
const httpPort = Number(process.env.WEIR_HTTP_PORT ?? (await freePort()));
const log = join(ROOT, '.it', `demo-weir-${Date.now()}.log`);
const weir = startService(process.execPath, ['--import', 'tsx', join(ROOT, 'test/harness/weir-entry.ts'), 'run', '-c', join(ROOT, 'weir.yaml')], log, {
  cwd: ROOT,
  env: { ...process.env, WEIR_MQTT_URL: mq.url, WEIR_PG_URL: pgUrl, WEIR_HTTP_PORT: String(httpPort), WEIR_CLIENT_ID: `weir-demo-${process.pid}` },
});
const metricsUrl = `http://127.0.0.1:${httpPort}/metrics`;
await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).ok, 60_000, 'weir ready');
process.stdout.write(`weir is running: broker ${mq.url}, database ${pgUrl}\nmetrics: ${metricsUrl}   logs: ${log}\n${DEVICES} simulated devices publish one 200 B sample per second each. Ctrl-C stops.\n`);

let stopping = false;
const devices = (async () => {
  for (let round = 0; !stopping; round++) {
    await publishLoad({ url: mq.url, clients: 4, devices: DEVICES, size: 200, qos: 1, limit: DEVICES, seqBase: round, clientIdPrefix: 'demo-device' });
    await new Promise((r) => setTimeout(r, 1000));
  }
})();

let lastStored = 0;
const ticker = setInterval(async () => {
  try {
    const m = parseMetrics(await (await fetch(metricsUrl)).text());
    const sum = (name: string) => [...m].filter(([k]) => k.startsWith(name)).reduce((a, [, v]) => a + v, 0);
    const stored = await countRows(pgUrl);
    process.stdout.write(`\rreceived ${sum('weir_ingest_received_total')}  matched ${sum('weir_rule_matched_total')}  stored ${stored} rows  ${stored - lastStored} rows/s  dead-lettered ${sum('weir_dead_letter_total')}   `);
    lastStored = stored;
  } catch {
    // weir is stopping
  }
}, 1000);

process.once('SIGINT', async () => {
  stopping = true;
  clearInterval(ticker);
  await devices;
  await weir.stop(30_000);
  await server.dispose();
  await mq.stop();
  process.stdout.write('\nstopped\n');
  process.exit(0);
});
