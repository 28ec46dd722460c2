// TLS and token authentication against a real Pulsar broker started with a self-signed
// certificate on its TLS port and AuthenticationProviderToken: the protocol transport's CONNECT
// (auth_method_name "token") over pulsar+ssl:// and the admin calls (Bearer) succeed with a valid
// JWT and the right CA; a token the broker cannot verify, or a certificate weir does not trust, is
// a fatal error, not a retry loop.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { WeirError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { pulsarSinkType } from '../../src/sinks/pulsar/index.js';
import { PulsarConfigSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import type { OutgoingMessage } from '../../src/sinks/pulsar/transport.js';
import type { Sink } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';
import { startPulsar, type PulsarBroker } from '../harness/pulsar.js';

const secret = randomBytes(32);

/** An HS256 JWT with subject `sub`, as Pulsar's token provider verifies it with its secret key. */
function jwt(sub: string, key: Buffer = secret): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256' })}.${part({ sub })}`;
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
}

const adminToken = jwt('weir-admin');
const certDir = tempDir('pulsar-tls');
const certFile = join(certDir, 'broker.pem');
const keyFile = join(certDir, 'broker.key');
let broker: PulsarBroker;

before(
  async () => {
    // A self-signed certificate for 127.0.0.1 (OpenSSL 3 writes the key as PKCS#8, which Pulsar needs).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    broker = await startPulsar({
      adminToken,
      tls: { certFile, keyFile },
      conf: {
        authenticationEnabled: 'true',
        authenticationProviders: 'org.apache.pulsar.broker.authentication.AuthenticationProviderToken',
        tokenSecretKey: `data:;base64,${secret.toString('base64')}`,
        superUserRoles: 'weir-admin',
        // The standalone broker's own admin client (it creates public/default) must authenticate too.
        brokerClientAuthenticationPlugin: 'org.apache.pulsar.client.impl.auth.AuthenticationToken',
        brokerClientAuthenticationParameters: `token:${adminToken}`,
      },
    });
  },
  { timeout: 240_000 },
);

after(async () => {
  await broker?.dispose();
  rmSync(certDir, { recursive: true, force: true });
});

function config(topic: string, token: string, over: Partial<PulsarConfig> = {}): PulsarConfig {
  return Value.Default(PulsarConfigSpec, {
    service_url: broker.serviceUrl,
    admin_url: broker.httpUrl,
    topic,
    create_topic: 'if_missing',
    partitions: 3,
    auth_token: token,
    connect_timeout_ms: 3_000,
    ...over,
  }) as PulsarConfig;
}

describe('pulsar sink with TLS and token authentication (real broker)', { timeout: 120_000 }, () => {
  it('creates the topic, connects and writes with a valid token', async () => {
    const topic = `persistent://public/default/auth-ok-${Date.now()}`;
    const sink = pulsarSinkType.create(config(topic, adminToken), { name: 'pulsar_auth', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
    await sink.connect(AbortSignal.timeout(30_000));
    const action = sink.bind({ key: '${clientid}' }, 'r1');
    const items = Array.from({ length: 30 }, (_, i) =>
      action.encode({ record: { i }, event: { topic: 't', clientid: `d${i % 4}`, payload: '' }, ruleId: 'r1' }),
    );
    const r = await sink.write(items, AbortSignal.timeout(30_000));
    assert.deepEqual([r.rejected.length, r.retry.length], [0, 0], r.retryError?.message);
    await sink.close();
    assert.equal((await countPulsarMessages(config(topic, adminToken))).total, 30);
  });

  it('reports a token the broker rejects as fatal, on the binary protocol and on the admin API', async () => {
    const forged = jwt('weir-admin', randomBytes(32));
    const topic = `persistent://public/default/auth-bad-${Date.now()}`;
    const direct = pulsarSinkType.create(config(topic, forged, { create_topic: 'never' }), { name: 'pulsar_auth', log: silentLogger });
    await assert.rejects(
      direct.connect(AbortSignal.timeout(30_000)),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.auth_failed' && direct.classify(e) === 'fatal' && /AuthenticationError/.test(e.message),
    );
    await direct.close();
    const viaAdmin = pulsarSinkType.create(config(topic, forged), { name: 'pulsar_auth', log: silentLogger });
    await assert.rejects(
      viaAdmin.connect(AbortSignal.timeout(30_000)),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.admin_failed' && viaAdmin.classify(e) === 'fatal' && /HTTP 401/.test(e.message),
    );
    await viaAdmin.close();
  });

  it('writes over pulsar+ssl:// trusting the broker certificate from tls_trust_certs_file', async () => {
    const topic = `persistent://public/default/tls-ok-${Date.now()}`;
    const cfg = config(topic, adminToken, { service_url: broker.serviceUrlTls!, tls_trust_certs_file: certFile });
    const sink = pulsarSinkType.create(cfg, { name: 'pulsar_tls', log: silentLogger }) as Sink<unknown, OutgoingMessage>;
    await sink.connect(AbortSignal.timeout(30_000));
    const action = sink.bind({ key: '${clientid}' }, 'r1');
    const items = Array.from({ length: 40 }, (_, i) =>
      action.encode({ record: { i }, event: { topic: 't', clientid: `d${i % 5}`, payload: '' }, ruleId: 'r1' }),
    );
    const r = await sink.write(items, AbortSignal.timeout(30_000));
    assert.deepEqual([r.rejected.length, r.retry.length], [0, 0], r.retryError?.message);
    await sink.probe(AbortSignal.timeout(5_000));
    await sink.close();
    assert.equal((await countPulsarMessages(cfg)).total, 40);
  });

  it('refuses an untrusted broker certificate as fatal, and accepts it with tls_verify: none', async () => {
    const topic = `persistent://public/default/tls-bad-${Date.now()}`;
    const untrusted = pulsarSinkType.create(config(topic, adminToken, { service_url: broker.serviceUrlTls!, create_topic: 'never' }), {
      name: 'pulsar_tls',
      log: silentLogger,
    });
    await assert.rejects(
      untrusted.connect(AbortSignal.timeout(30_000)),
      (e: unknown) => e instanceof WeirError && e.code === 'sink.pulsar.tls_failed' && untrusted.classify(e) === 'fatal',
    );
    await untrusted.close();
    const insecure = pulsarSinkType.create(config(topic, adminToken, { service_url: broker.serviceUrlTls!, tls_verify: 'none' }), {
      name: 'pulsar_tls',
      log: silentLogger,
    });
    await insecure.connect(AbortSignal.timeout(30_000));
    await insecure.close();
  });
});
