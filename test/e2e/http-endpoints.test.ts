// The HTTP endpoints (operators' issue, item 3), on a weir process against real Mosquitto and
// PostgreSQL: HEAD answered like GET without a body, the process metrics and weir_build_info on
// /metrics, and http.basic_auth: 401 without the credentials, 200 with them, /healthz and
// /readyz's verdict open for probes, the console's page protected like /metrics, `weir reconcile`
// reading /metrics with credentials in the URL.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { parseMetrics, runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, telemetryFiles } from './fixtures.js';

const USER = 'prometheus';
const PASSWORD = 'p4ss:w0rd-é';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-http');
});

test('HEAD like GET without a body, process metrics and build info, basic auth with open probes', { timeout: 60_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-http' });
  const config = files.config.replace(
    'http: { host: 127.0.0.1, port: {{HTTP_PORT}} }',
    `http: { host: 127.0.0.1, port: {{HTTP_PORT}}, basic_auth: { username: ${USER}, password: '\${HTTP_PASSWORD}' } }`,
  );
  assert.notEqual(config, files.config);
  weir = await startWeir({ ...files, config }, { env: { HTTP_PASSWORD: PASSWORD } });
  const base = `http://127.0.0.1:${weir.httpPort}`;
  const get = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);
  const authed = { headers: { authorization: AUTH } };
  await waitFor(async () => (await get('/readyz')).status === 200, 20_000, 'weir ready');

  // HEAD: the GET's status and content type, no body.
  for (const path of ['/metrics', '/healthz', '/readyz', '/rules', '/sinks']) {
    const head = await get(path, { method: 'HEAD', ...authed });
    const body = await head.text();
    const full = await get(path, authed);
    assert.equal(head.status, 200, `HEAD ${path}`);
    assert.equal(body, '', `HEAD ${path} has no body`);
    assert.equal(head.headers.get('content-type'), full.headers.get('content-type'), `HEAD ${path}: GET's content type`);
    assert.ok((await full.text()).length > 0, `GET ${path} has a body`);
  }
  const post = await get('/metrics', { method: 'POST', ...authed });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');

  // Process metrics under weir's prefix, and the build info.
  const metrics = parseMetrics(await (await get('/metrics', authed)).text());
  assert.ok((metrics.get('weir_process_resident_memory_bytes') ?? 0) > 10_000_000, 'resident memory');
  assert.ok(metrics.has('weir_process_cpu_seconds_total'), 'CPU');
  assert.ok(metrics.has('weir_nodejs_eventloop_lag_seconds'), 'event-loop lag');
  assert.equal(metrics.get(`weir_build_info{version="0.1.0",node="${process.versions.node}"}`), 1);

  // Basic auth: nothing but the probes without the credentials.
  for (const path of ['/metrics', '/rules', '/sinks', '/', '/assets/app.js']) {
    const r = await get(path);
    assert.equal(r.status, 401, `GET ${path} without credentials`);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm="weir"/);
    const wrong = await get(path, { headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}x`).toString('base64')}` } });
    assert.equal(wrong.status, 401, `GET ${path} with a wrong password`);
    assert.equal((await get(path, authed)).status, 200, `GET ${path} with the credentials`);
  }
  assert.equal((await get('/healthz')).status, 200, '/healthz open for liveness probes');
  const open = await get('/readyz');
  assert.equal(open.status, 200, "/readyz's verdict open for readiness probes");
  assert.deepEqual(await open.json(), { ready: true }, 'without the detail');
  const detail = (await (await get('/readyz', authed)).json()) as { sinks?: Record<string, unknown> };
  assert.ok(detail.sinks?.tsdb, 'the detail with the credentials');
  assert.doesNotMatch(weir.log(), /p4ss/, 'the password is not logged');

  // weir reconcile reads a protected /metrics with the credentials in the URL.
  const url = `http://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${weir.httpPort}/metrics`;
  const rec = await runCli(['reconcile', '-c', join(weir.dir, 'weir.yaml'), '--metrics', url], { HTTP_PASSWORD: PASSWORD });
  assert.doesNotMatch(rec.stderr, /HTTP 401|reading --metrics/, rec.stderr);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.equal(await weir.stop(), 0);
  weir = undefined;
});
