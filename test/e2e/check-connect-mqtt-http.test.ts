// weir check --connect for the mqtt (republish) and http (webhook) sinks, against real parts:
// - mqtt: a live Mosquitto (the sink's own url, and weir's broker when url is absent) is ok and
//   the check leaves no session behind; a closed port is unreachable (exit 3); a wrong password on
//   a Mosquitto with a password file is the CONNACK's reason code, also exit 3 (as a PostgreSQL
//   sink's wrong password); a broker whose CONNACK says it takes no retain and QoS 0 at most names
//   the actions that would send them.
// - http: the test webhook server is ok and receives ZERO requests; a closed port is unreachable;
//   an https server whose certificate a private CA signed is a TLS problem without tls.ca_file,
//   and ok with it; a servername the certificate does not hold is a problem too.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import mqtt, { type IConnackPacket } from 'mqtt';
import { certificates } from '../harness/certificates.js';
import { type MosquittoBroker, sharedMosquitto, startMosquitto } from '../harness/mosquitto.js';
import { freePort, tempDir, waitFor } from '../harness/process.js';
import { startWebhookServer } from '../harness/webhook-server.js';
import { runCli, startWeir } from '../harness/weir.js';

const brokers: MosquittoBroker[] = [];
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const b of brokers) await b.dispose();
  for (const c of closers) await c();
});

/** A project with weir.yaml and rule files; returns the config file and the rules' directory. */
function project(config: string, rules: Record<string, string>): { cfg: string; rulesDir: string } {
  const dir = tempDir('check-connect-mqtt-http');
  const rulesDir = join(dir, 'rules');
  mkdirSync(rulesDir);
  for (const [n, t] of Object.entries(rules)) writeFileSync(join(rulesDir, n), t);
  writeFileSync(join(dir, 'weir.yaml'), `${config}dead_letter: { file: ${join(dir, 'dead-letters.jsonl')} }\n`);
  return { cfg: join(dir, 'weir.yaml'), rulesDir };
}

const ALERT_RULE = `id: alerts
sql: SELECT payload.temp AS temp, clientid FROM "device/+/telemetry" WHERE payload.temp > 80
actions:
  - sink: alerts
    topic: alerts/\${clientid}
    qos: 1
    retain: true
`;

/** Whether the broker holds a session for `clientId` (the CONNACK's session-present flag of a non-clean MQTT 5 connect); ends it. */
async function sessionPresent(url: string, clientId: string, keep = 0): Promise<boolean> {
  const c = mqtt.connect(url, { clientId, protocolVersion: 5, clean: false, reconnectPeriod: 0, properties: { sessionExpiryInterval: keep } });
  const connack = await new Promise<IConnackPacket>((resolve, reject) => {
    c.once('connect', resolve);
    c.once('error', reject);
  });
  await c.endAsync();
  return connack.sessionPresent;
}

test('mqtt: a live Mosquitto (its own url, and weir’s broker when url is absent) is ok, and the check leaves no session there', {
  timeout: 60_000,
}, async () => {
  const { url } = await sharedMosquitto();
  const { cfg } = project(
    `broker: { url: ${url}, client_id: verify-live }\nsinks:\n  alerts: { type: mqtt }\n  elsewhere: { type: mqtt, url: ${url}, client_id: verify-elsewhere }\n`,
    { 'alerts.yaml': ALERT_RULE, 'copy.yaml': ALERT_RULE.replace('id: alerts', 'id: copy').replace('sink: alerts', 'sink: elsewhere') },
  );
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ok: sink alerts has what the rules need$/m);
  assert.match(r.stdout, /^ok: sink elsewhere has what the rules need$/m);
  assert.equal(r.stderr, '');
  // The check's client ids: '<the sink's client id>-verify'; clean sessions, gone with their
  // connections. (A session kept on purpose is seen, so the flag is read right.)
  await sessionPresent(url, 'verify-control', 60);
  assert.equal(await sessionPresent(url, 'verify-control'), true);
  assert.equal(await sessionPresent(url, 'verify-live-alerts-verify'), false);
  assert.equal(await sessionPresent(url, 'verify-elsewhere-verify'), false);
});

test('mqtt: a closed port is unreachable, exit 3, naming the sink, the url and the client id', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const { cfg } = project(`sinks:\n  alerts: { type: mqtt, url: 'mqtt://127.0.0.1:${port}', client_id: weir-alerts, connect_timeout_ms: 2000 }\n`, {
    'alerts.yaml': ALERT_RULE,
  });
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 3, r.stdout + r.stderr);
  assert.equal(
    r.stderr,
    `error: sink alerts: cannot connect: mqtt://127.0.0.1:${port} (client id weir-alerts-verify): connect ECONNREFUSED 127.0.0.1:${port}\n`,
  );
});

test('mqtt: a wrong password is the CONNACK reason code (exit 3, the password never shown); the right one is ok', { timeout: 60_000 }, async () => {
  const b = await startMosquitto({ user: { username: 'weir', password: 'right-one' } });
  brokers.push(b);
  const { cfg } = project(`sinks:\n  alerts: { type: mqtt, url: '${b.url}', username: weir, password: '\${ALERTS_PASSWORD}', client_id: weir-alerts }\n`, {
    'alerts.yaml': ALERT_RULE,
  });
  const wrong = await runCli(['check', '--connect', '-c', cfg], { ALERTS_PASSWORD: 'hunter2' });
  assert.equal(wrong.code, 3, wrong.stdout + wrong.stderr);
  // Mosquitto 2 answers a wrong password with 0x87 Not authorized (not 0x86 Bad User Name or Password).
  assert.equal(
    wrong.stderr,
    `error: sink alerts: cannot connect: ${b.url} (client id weir-alerts-verify): the broker refused the connection: CONNACK 0x87 Not authorized\n`,
  );
  assert.ok(!(wrong.stdout + wrong.stderr).includes('hunter2'));
  const right = await runCli(['check', '--connect', '-c', cfg], { ALERTS_PASSWORD: 'right-one' });
  assert.equal(right.code, 0, right.stderr);
  assert.match(right.stdout, /^ok: sink alerts has what the rules need$/m);
  // MQTT 3.1.1 gives its own return code, named as 3.1.1 names it.
  writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('client_id: weir-alerts', 'client_id: weir-alerts, protocol_version: 4'));
  const v4 = await runCli(['check', '--connect', '-c', cfg], { ALERTS_PASSWORD: 'hunter2' });
  assert.equal(v4.code, 3);
  assert.match(v4.stderr, /\(client id weir-alerts-verify\): the broker refused the connection: CONNACK 0x05 Not authorized\n$/);
});

test('mqtt: a broker whose CONNACK takes no retain and QoS 0 at most: the actions that would send them, at their lines (exit 1)', {
  timeout: 60_000,
}, async () => {
  const b = await startMosquitto({ extra: ['retain_available false', 'max_qos 0'] });
  brokers.push(b);
  const rules = {
    'alerts.yaml': ALERT_RULE,
    'quiet.yaml': `id: quiet
sql: SELECT clientid FROM "device/+/telemetry"
actions:
  - sink: alerts
    topic: quiet/\${clientid}
    qos: 0
`,
  };
  const { cfg, rulesDir } = project(`sinks:\n  alerts: { type: mqtt, url: '${b.url}' }\n`, rules);
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const at = (text: string) => `${join(rulesDir, 'alerts.yaml')}:${ALERT_RULE.split('\n').findIndex((l) => l.includes(text)) + 1}`;
  assert.deepEqual(r.stderr.trimEnd().split('\n'), [
    `error: ${at('retain: true')}: rule alerts: retain: true, but the broker at ${b.url} does not take retained messages (CONNACK Retain Available 0): it would disconnect the sink at the first PUBLISH; set retain: false`,
    `error: ${at('qos: 1')}: rule alerts: qos 1, but the broker at ${b.url} takes QoS 0 at most (CONNACK Maximum QoS 0); set qos: 0 (no receipt: a message can be lost)`,
  ]);
});

/** An https server on a free loopback port with the harness CA's certificate for 127.0.0.1; counts the requests it gets. */
async function httpsServer(): Promise<{ url: string; port: number; requests: () => number; cafile: string }> {
  const certs = certificates();
  let n = 0;
  const server = https.createServer({ cert: readFileSync(certs.certfile), key: readFileSync(certs.keyfile) }, (_req, res) => {
    n++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { url: `https://127.0.0.1:${port}`, port, requests: () => n, cafile: certs.cafile };
}

const HOOK_RULE = `id: hook
sql: SELECT payload.temp AS temp, clientid FROM "device/+/telemetry"
actions:
  - sink: hook
    format: json_array
  - sink: hook
    url: https://\${clientid}.devices.example.com/v1/samples
`;

test('http: the webhook server is ok and receives ZERO requests; an action url with a templated host is not connected to', { timeout: 60_000 }, async () => {
  const server = await startWebhookServer();
  closers.push(() => server.dispose());
  const { cfg } = project(`sinks:\n  hook: { type: http, url: '${server.url}/v1/telemetry' }\n`, { 'hook.yaml': HOOK_RULE });
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ok: sink hook has what the rules need$/m);
  assert.equal(r.stderr, '');
  assert.equal(server.requests.length, 0, 'the check sends no request');
});

test('http: a closed port is unreachable (exit 3), naming host:port and where the url is written', { timeout: 60_000 }, async () => {
  const server = await startWebhookServer();
  closers.push(() => server.dispose());
  const closed = await freePort();
  const rules = {
    'hook.yaml': `id: hook
sql: SELECT clientid FROM "device/+/telemetry"
actions:
  - sink: hook
    url: http://127.0.0.1:${closed}/v1/\${clientid}
`,
  };
  const { cfg, rulesDir } = project(`sinks:\n  hook: { type: http, url: '${server.url}/v1/telemetry' }\n`, rules);
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 3, r.stdout + r.stderr);
  assert.equal(
    r.stderr,
    `error: sink hook: cannot connect: no connection to 127.0.0.1:${closed} (${join(rulesDir, 'hook.yaml')}:5: rule hook: url): connect ECONNREFUSED 127.0.0.1:${closed}\n`,
  );
  assert.equal(server.requests.length, 0);
});

test('http: https with a certificate of a private CA is a TLS problem without tls.ca_file, ok with it; a servername it does not hold is a problem', {
  timeout: 60_000,
}, async () => {
  const s = await httpsServer();
  const { cfg } = project(`sinks:\n  hook: { type: http, url: '${s.url}/v1/telemetry' }\n`, { 'hook.yaml': HOOK_RULE });
  const untrusted = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(untrusted.code, 1, untrusted.stdout + untrusted.stderr);
  // Node's own sentence for the code sits in the middle; Node 26 adds a hint to it (about
  // --use-system-ca) that Node 20 does not, so that part is matched, the rest is exact.
  const [head, tail] = untrusted.stderr.split(' (UNABLE_TO_VERIFY_LEAF_SIGNATURE); ');
  assert.match(
    head!,
    new RegExp(
      `^error: sinks\\.hook\\.url: ${s.url.replace(/\./g, '\\.')}: TLS with the server at 127\\.0\\.0\\.1:${s.port} fails: unable to verify the first certificate`,
    ),
  );
  assert.equal(
    tail,
    "the sink's requests would fail the same way: give tls.ca_file (the CA that signed its certificate) or tls.servername (the name it holds), or fix the server's certificate\n",
  );
  writeFileSync(cfg, readFileSync(cfg, 'utf8').replace("/v1/telemetry' }", `/v1/telemetry', tls: { ca_file: ${s.cafile} } }`));
  const trusted = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.match(trusted.stdout, /^ok: sink hook has what the rules need$/m);
  writeFileSync(cfg, readFileSync(cfg, 'utf8').replace(`ca_file: ${s.cafile}`, `ca_file: ${s.cafile}, servername: ingest.example.com`));
  const misnamed = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(misnamed.code, 1, misnamed.stdout + misnamed.stderr);
  assert.match(
    misnamed.stderr,
    /^error: sinks\.hook\.url: .*TLS with the server at 127\.0\.0\.1:\d+ fails: .*ingest\.example\.com.* \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
  );
  assert.equal(s.requests(), 0, 'the check sends no request');
});

test('reconcile: a webhook sink has no count of its own; a line per rule with what weir sent and dead-lettered from --metrics, and what to do', {
  timeout: 90_000,
}, async () => {
  const { url } = await sharedMosquitto();
  // The server refuses the record of temp 50 (dead-lettered), takes the others.
  const server = await startWebhookServer((req) => ({ status: req.records.some((r) => r.temp === 50) ? 400 : 200 }));
  closers.push(() => server.dispose());
  const clientId = `weir-reconcile-hook-${process.pid}`;
  const weir = await startWeir(
    {
      config: `broker: { url: ${url}, client_id: ${clientId}, connections: 1, share_group: '' }
sinks:
  hook: { type: http, url: '${server.url}/ingest', batch: { max_items: 10, max_delay_ms: 10 } }
dead_letter: { file: dead-letters.jsonl }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
      rules: {
        'all.yaml': `id: all\nsql: SELECT payload.temp AS temp FROM "recon/+/t"\nactions:\n  - sink: hook\n`,
        'hot.yaml': `id: hot\nsql: SELECT payload.temp AS temp FROM "recon/+/t" WHERE payload.temp > 80\nactions:\n  - sink: hook\n`,
      },
    },
    { args: ['--transient'] },
  );
  closers.push(async () => void (await weir.stop()));
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const pub = await mqtt.connectAsync(url, { clientId: `${clientId}-pub`, protocolVersion: 5, reconnectPeriod: 0 });
  for (let i = 0; i < 10; i++) await pub.publishAsync(`recon/${i}/t`, JSON.stringify({ temp: i * 10 }), { qos: 1 });
  await pub.endAsync();
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= 10, 30_000, '10 messages acked by weir');

  const cfg = join(weir.dir, 'weir.yaml');
  const bare = await runCli(['reconcile', '-c', cfg]);
  assert.equal(bare.code, 0, bare.stdout + bare.stderr);
  assert.match(
    bare.stdout,
    /^ {2}all → hook: a http sink has no count of its own: give --metrics for what weir sent \(success\) and dead-lettered, and compare that with what the receiver counted$/m,
  );
  const r = await runCli(['reconcile', '-c', cfg, '-m', `http://127.0.0.1:${weir.httpPort}/metrics`, '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const doc = JSON.parse(r.stdout) as { ok: boolean; lines: Array<Record<string, unknown>> };
  const note = 'a http sink has no count of its own: compare success (what weir sent) with what the receiver counted';
  assert.deepEqual(
    doc.lines.map((l) => [l.rule, l.sink, l.target, l.matched, l.passed, l.success, l.deadLettered, l.note]),
    [
      ['all', 'hook', '-', 10, 10, 9, 1, note],
      ['hot', 'hook', '-', 10, 1, 1, 0, note],
    ],
  );
  assert.equal(doc.ok, true);
  // What the receiver counted, as the note says to compare: 9 + 1 records taken.
  assert.equal(server.stored.length, 10);
});
