// http.tls (operators' issue, HTTP): weir's endpoints over HTTPS with a certificate made in the
// test by a private CA, on a weir process against real Mosquitto and PostgreSQL. HTTPS answers,
// plain HTTP on the port is refused, and with client_ca_file a request without a client
// certificate fails its handshake while one with a certificate the CA signed gets 200. The files
// are checked by the validation weir check and weir run share: a missing one, or a key that is
// not the certificate's, is an error at weir.yaml:line:col before anything listens.
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { certificates, type Certificates } from '../harness/certificates.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir, waitFor } from '../harness/process.js';
import { runCli, startWeir, writeWeirFiles, type WeirProcess } from '../harness/weir.js';
import { endSessions, telemetryFiles } from './fixtures.js';

const certs: Certificates = certificates();
const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id);
});

/** A GET over HTTPS trusting the test CA; `client`: present the client certificate. */
function httpsGet(port: number, path: string, client = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        timeout: 5_000,
        ca: readFileSync(certs.cafile),
        ...(client ? { cert: readFileSync(certs.clientCertfile), key: readFileSync(certs.clientKeyfile) } : {}),
      },
      // No keep-alive agent (a pooled socket would outlive the test), and a bound on a stuck handshake.
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/** weir.yaml's http line with a tls block whose paths are relative to weir.yaml (copied beside it). */
function tlsConfig(base: string, tls: string): string {
  const config = base.replace('http: { host: 127.0.0.1, port: {{HTTP_PORT}} }', `http:\n  host: 127.0.0.1\n  port: {{HTTP_PORT}}\n  tls:\n${tls}`);
  assert.notEqual(config, base);
  return config;
}

function besideConfig(dir: string): void {
  for (const [from, to] of [
    [certs.certfile, 'server.crt'],
    [certs.keyfile, 'server.key'],
    [certs.cafile, 'clients-ca.crt'],
  ] as const)
    copyFileSync(from, join(dir, to));
}

async function weirWith(clientId: string, tls: string, client: boolean): Promise<WeirProcess> {
  const { url: mqttUrl } = await sharedMosquitto();
  sessions.push([mqttUrl, clientId]);
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId });
  const dir = tempDir('weir-tls');
  besideConfig(dir);
  const weir = await startWeir(
    { ...files, config: tlsConfig(files.config, tls) },
    { dir, healthz: async (port) => (await httpsGet(port, '/healthz', client)).status === 200 },
  );
  running.push(weir);
  return weir;
}

test('http.tls: HTTPS with the certificate, plain HTTP refused', { timeout: 60_000 }, async () => {
  const weir = await weirWith('weir-https', '    cert_file: server.crt\n    key_file: server.key\n', false);
  await waitFor(async () => (await httpsGet(weir.httpPort, '/readyz')).status === 200, 20_000, 'weir ready over HTTPS');
  const metrics = await httpsGet(weir.httpPort, '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.body, /^weir_build_info\{/m);
  assert.equal((await httpsGet(weir.httpPort, '/rules')).status, 200);
  // Plain HTTP to the HTTPS port: the TLS server drops the connection, no answer is served.
  await assert.rejects(fetch(`http://127.0.0.1:${weir.httpPort}/metrics`), 'plain HTTP is refused');
  // A client that does not trust the CA refuses the server's certificate.
  await assert.rejects(fetch(`https://127.0.0.1:${weir.httpPort}/healthz`), 'the certificate is not trusted without the CA');
  assert.equal(await weir.stop(), 0);
  running.splice(running.indexOf(weir), 1);
});

test('http.tls.client_ca_file: a client certificate the CA signed is required', { timeout: 60_000 }, async () => {
  const weir = await weirWith('weir-mtls', '    cert_file: server.crt\n    key_file: server.key\n    client_ca_file: clients-ca.crt\n', true);
  await waitFor(async () => (await httpsGet(weir.httpPort, '/readyz', true)).status === 200, 20_000, 'weir ready over mutual TLS');
  assert.equal((await httpsGet(weir.httpPort, '/metrics', true)).status, 200, 'with the client certificate');
  await assert.rejects(httpsGet(weir.httpPort, '/metrics'), 'without a client certificate the handshake fails');
  await assert.rejects(httpsGet(weir.httpPort, '/healthz'), 'the probes too: the handshake comes before any path');
  await assert.rejects(fetch(`http://127.0.0.1:${weir.httpPort}/metrics`), 'plain HTTP is refused');
  assert.equal(await weir.stop(), 0);
  running.splice(running.indexOf(weir), 1);
});

test('http.tls files are checked by weir check and weir run: a missing file and a key of another certificate at weir.yaml:line:col', {
  timeout: 60_000,
}, async () => {
  const base = `
broker:
  url: mqtt://127.0.0.1:1
sinks:
  db:
    type: postgres
    url: postgres://weir@127.0.0.1:1/weir
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`;
  const rule = 'id: r1\nsql: SELECT payload.t AS t FROM "d/+"\nactions:\n  - sink: db\n    table: t\n    columns: { t: \'${t}\' }\n';
  const dir = writeWeirFiles(
    { config: tlsConfig(base, '    cert_file: server.crt\n    key_file: server.key\n    client_ca_file: nope/ca.crt\n'), rules: { 'r1.yaml': rule } },
    0,
    tempDir('tls-check'),
  );
  besideConfig(dir);
  const file = join(dir, 'weir.yaml');
  for (const cmd of ['check', 'run']) {
    const r = await runCli([cmd, '-c', file]);
    assert.notEqual(r.code, 0, `${cmd}: ${r.stderr}`);
    assert.ok(r.stderr.includes(`${file}:14:21: http.tls.client_ca_file: cannot read ${join(dir, 'nope/ca.crt')}: no such file\n`), `${cmd}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${cmd}: no stack trace`);
  }
  // The client's key with the server's certificate: named at key_file.
  const wrong = writeWeirFiles(
    { config: tlsConfig(base, `    cert_file: server.crt\n    key_file: ${certs.clientKeyfile}\n`), rules: { 'r1.yaml': rule } },
    0,
    tempDir('tls-check'),
  );
  besideConfig(wrong);
  const r = await runCli(['check', '-c', join(wrong, 'weir.yaml')]);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /weir\.yaml:13:15: http\.tls\.key_file: the key in .*client\.key is not the private key of the certificate in .*server\.crt/,
    r.stderr,
  );
  // A certificate that is no PEM at all.
  const garbage = writeWeirFiles(
    { config: tlsConfig(base, '    cert_file: weir.yaml\n    key_file: server.key\n'), rules: { 'r1.yaml': rule } },
    0,
    tempDir('tls-check'),
  );
  besideConfig(garbage);
  const g = await runCli(['check', '-c', join(garbage, 'weir.yaml')]);
  assert.match(g.stderr, /weir\.yaml:12:16: http\.tls\.cert_file: .*weir\.yaml is not a PEM certificate/, g.stderr);
});
