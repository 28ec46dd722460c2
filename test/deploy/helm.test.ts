// The Helm chart (deploy/helm/weir), checked the strict way, since no cluster runs here: Helm's own
// lint and template engine (test/harness/helm.ts, helm.sh/helm/v4 built once), then every rendered
// object decoded into its Kubernetes API type with unknown fields and unknown kinds refused
// (test/deploy/kube-validate, k8s.io/api and the Prometheus Operator's types). Two renders: the
// defaults, and every optional part on (ServiceMonitor, PodMonitor, autoscaler, an existing Secret,
// more replicas, HTTPS with basic auth, no persistent volume). Then what matters for weir in them:
// - the client id is the pod name (downward API) and weir.yaml takes it from ${WEIR_CLIENT_ID};
// - the weir.yaml and rules of the ConfigMaps load through weir's own loader and pass `weir check`,
//   with exactly the environment the container gets (a ${VAR} the pod does not set fails here), in
//   a copy of the pod's file system: each mount laid out under a temporary root;
// - every path that configuration makes weir write (the dead-letter file or fallback file, from
//   weir's own dead-letter-place.ts) is in a writable volume, the root filesystem being read-only;
// - probes on /healthz and /readyz at weir's http.port, the scheme following http.tls;
// - terminationGracePeriodSeconds above weir's own stop time, from --grace-ms and the constants of
//   runtime.ts and run.ts;
// - selectors of the Services, PDB and monitors match the pods, the autoscaler the StatefulSet.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { EXIT_WAIT_MS } from '../../src/cli/run.js';
import { loadConfig } from '../../src/config/load.js';
import { deadLetterPlace } from '../../src/core/app/dead-letter-place.js';
import { CLOSE_FLOOR_MS, DEFAULT_GRACE_MS } from '../../src/core/app/runtime.js';
import { certificates } from '../harness/certificates.js';
import { builtHelm, HELM_VERSION } from '../harness/helm.js';
import { builtKubeValidate } from '../harness/kube-validate.js';
import { tempDir } from '../harness/process.js';
import { ROOT, runCli } from '../harness/weir.js';

const CHART = join(ROOT, 'deploy/helm/weir');
const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are checked field by field below
type Obj = any;

async function exec(bin: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = run(bin, args, { maxBuffer: 16 * 1024 * 1024 });
  if (input !== undefined) {
    p.child.stdin!.end(input);
  }
  try {
    const r = await p;
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function helm(args: string[]) {
  return exec(await builtHelm(), args);
}

async function validate(manifests: string) {
  return exec(await builtKubeValidate(), [], manifests);
}

/** Every optional part on. */
const EVERYTHING = {
  replicas: 5,
  existingSecret: 'weir-secrets',
  secretEnv: { WEIR_MQTT_PASSWORD: 'mqtt-password', WEIR_PG_URL: 'pg-url', WEIR_HTTP_PASSWORD: 'http-password' },
  env: { WEIR_MQTT_USERNAME: 'weir' },
  config: {
    broker: { connections: 8 },
    http: {
      tls: { cert_file: '/etc/weir/tls/tls.crt', key_file: '/etc/weir/tls/tls.key' },
      basic_auth: { username: 'prometheus', password: '${WEIR_HTTP_PASSWORD}' },
    },
  },
  extraVolumes: [{ name: 'tls', secret: { secretName: 'weir-tls' } }],
  extraVolumeMounts: [{ name: 'tls', mountPath: '/etc/weir/tls', readOnly: true }],
  graceMs: 45_000,
  persistence: { enabled: false },
  podManagementPolicy: 'Parallel',
  monitoring: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true }, basicAuthSecret: { name: 'weir-metrics' } },
  autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 8 },
};

interface Render {
  readonly text: string;
  readonly objects: Obj[];
  readonly values: string | undefined;
}

async function render(release: string, values?: object): Promise<Render> {
  const args = ['template', release, CHART, '--namespace', 'telemetry'];
  let file: string | undefined;
  if (values) {
    file = join(tempDir('helm-values'), 'values.yaml');
    writeFileSync(file, stringify(values));
    args.push('--values', file);
  }
  const r = await helm(args);
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  const objects = parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .filter((o) => o);
  return { text: r.stdout, objects, values: file };
}

function one(objects: Obj[], kind: string, suffix = ''): Obj {
  const found = objects.filter((o) => o.kind === kind && (suffix === '' || o.metadata.name.endsWith(suffix)));
  assert.equal(found.length, 1, `one ${kind}${suffix ? ` named *${suffix}` : ''}`);
  return found[0];
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v) && Object.keys(selector).length > 0;
}

/** The environment the container gets, with a stand-in value for each Secret key it reads. */
function containerEnv(container: Obj, podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = secretStandIn(e.valueFrom.secretKeyRef.key);
    else assert.fail(`env ${e.name}: a source this test does not know`);
  }
  return env;
}

function secretStandIn(key: string): string {
  return key === 'pg-url' ? 'postgres://weir:secret@timescaledb:5432/weir' : `secret-${key}`;
}

interface Pod {
  readonly root: string;
  readonly env: Record<string, string>;
  readonly configFile: string;
  /** Writable mounts, in the pod's paths. */
  readonly writable: string[];
}

/**
 * The pod's file system under a temporary root: each ConfigMap's files where it is mounted, a
 * certificate and key where a Secret named *tls* is, the other volumes as empty directories. Paths
 * in weir.yaml and the environment are the pod's; they are moved under the root here (the one
 * liberty taken), so weir's loader reads the files the pod would.
 */
function layOutPod(objects: Obj[], podName: string): Pod {
  const sts = one(objects, 'StatefulSet');
  const spec = sts.spec.template.spec;
  const container = spec.containers[0];
  const root = tempDir('pod-root');
  const claims = new Set((sts.spec.volumeClaimTemplates ?? []).map((c: Obj) => c.metadata.name));
  const writable: string[] = [];
  const mounts: string[] = [];
  for (const m of container.volumeMounts) {
    const dir = join(root, m.mountPath);
    mkdirSync(dir, { recursive: true });
    mounts.push(m.mountPath);
    const volume = spec.volumes.find((v: Obj) => v.name === m.name);
    assert.ok(volume || claims.has(m.name), `mount ${m.name}: no volume or claim template of that name`);
    assert.equal(m.subPath, undefined, `mount ${m.name}: a subPath mount never sees a ConfigMap update`);
    if (volume?.configMap) {
      const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === volume.configMap.name);
      assert.ok(cm, `ConfigMap ${volume.configMap.name} is rendered`);
      for (const [name, text] of Object.entries(cm.data as Record<string, string>)) writeFileSync(join(dir, name), text);
    } else if (volume?.secret) {
      const tls = certificates();
      copyFileSync(tls.certfile, join(dir, 'tls.crt'));
      copyFileSync(tls.keyfile, join(dir, 'tls.key'));
    }
    if (!m.readOnly) {
      assert.ok(claims.has(m.name) || volume.emptyDir, `writable mount ${m.mountPath} is a volume claim or an emptyDir`);
      writable.push(m.mountPath);
    }
  }
  // One pass, longest mount first: a path already moved under the root is not moved again.
  const mountPattern = new RegExp(`(?<![\\w/])(${mounts.sort((a, b) => b.length - a.length).join('|')})(?=/|$|\\s)`, 'gm');
  const inRoot = (text: string) => text.replace(mountPattern, (m) => join(root, m));
  const env = Object.fromEntries(Object.entries(containerEnv(container, podName)).map(([k, v]) => [k, inRoot(v)]));
  const args: string[] = container.args;
  const configFile = join(root, args[args.indexOf('--config') + 1]!);
  writeFileSync(configFile, inRoot(readFileSync(configFile, 'utf8')));
  return { root, env, configFile, writable };
}

/** The checks every render passes; returns the loaded configuration and the pod. */
async function checkRender(r: Render, release: string) {
  const v = await validate(r.text);
  assert.equal(v.code, 0, `kube-validate refused the render:\n${v.stderr}`);
  assert.equal(v.stdout.trim().split('\n').length, r.objects.length, 'every rendered object was decoded');

  const sts = one(r.objects, 'StatefulSet');
  const pod = sts.spec.template;
  const container = pod.spec.containers[0];
  const podName = `${sts.metadata.name}-1`;

  // The client id: the pod's name, through the downward API, into broker.client_id.
  const clientId = container.env.find((e: Obj) => e.name === 'WEIR_CLIENT_ID');
  assert.deepEqual(clientId.valueFrom, { fieldRef: { fieldPath: 'metadata.name' } });
  const cmConfig = one(r.objects, 'ConfigMap', '-config');
  assert.equal(parse(cmConfig.data['weir.yaml']).broker.client_id, '${WEIR_CLIENT_ID}');
  const names = container.env.map((e: Obj) => e.name);
  assert.equal(new Set(names).size, names.length, 'each environment variable once');

  // weir's loader on the ConfigMaps, with the container's environment, in the pod's layout.
  const p = layOutPod(r.objects, podName);
  const cfg = loadConfig(p.configFile, p.env);
  assert.equal(cfg.broker.client_id, podName, 'weir connects as its pod');
  assert.ok(cfg.rules.length > 0, 'the rules ConfigMap holds rules weir loads');
  const check = await runCli(['check', '--config', p.configFile], p.env, p.root);
  assert.equal(check.code, 0, `weir check on the rendered ConfigMaps:\n${check.stdout}${check.stderr}`);
  const rulesMount = container.volumeMounts.find((m: Obj) => m.name === 'rules');
  assert.equal(cfg.rulesDir, join(p.root, rulesMount.mountPath), 'rules_dir is the rules ConfigMap, mounted whole');

  // Every path weir writes, as its own code decides them, is in a writable volume.
  const place = deadLetterPlace(cfg);
  const written = [resolve(dirname(cfg.file), cfg.deadLetter.fallback_file), ...('file' in place ? [place.file] : [])];
  for (const path of written) {
    assert.ok(
      p.writable.some((w) => path.startsWith(`${join(p.root, w)}/`)),
      `${path.slice(p.root.length)} is in a writable volume (${p.writable.join(', ')})`,
    );
  }
  // os.tmpdir() in the pod, where TMPDIR is not set: /tmp, for a library that writes a temporary file.
  assert.ok(!('TMPDIR' in p.env) && p.writable.includes('/tmp'), '/tmp is a writable volume');

  // Non-root, read-only root filesystem, nothing to escalate to.
  assert.equal(pod.spec.securityContext.runAsNonRoot, true);
  assert.ok(Number.isInteger(pod.spec.securityContext.runAsUser) && pod.spec.securityContext.runAsUser > 0, 'a numeric non-root uid');
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
  assert.equal(pod.spec.automountServiceAccountToken, false, 'weir needs no Kubernetes API token');

  // Probes: /healthz and /readyz on weir's http.port, HTTPS when weir serves HTTPS.
  const port = container.ports.find((x: Obj) => x.name === 'http');
  assert.equal(port.containerPort, cfg.http.port);
  const scheme = cfg.http.tls ? 'HTTPS' : 'HTTP';
  assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'http', scheme });
  assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'http', scheme });

  // SIGKILL only after weir's own stop: the grace period, the closing floor, the exit wait.
  const args: string[] = container.args;
  const graceMs = Number(args[args.indexOf('--grace-ms') + 1]);
  assert.ok(graceMs > 0, '--grace-ms is passed');
  const stopS = Math.ceil(graceMs / 1000) + CLOSE_FLOOR_MS / 1000 + EXIT_WAIT_MS / 1000;
  assert.ok(pod.spec.terminationGracePeriodSeconds > stopS, `terminationGracePeriodSeconds ${pod.spec.terminationGracePeriodSeconds} > ${stopS}`);

  // Selectors: the Services, the PDB, the monitors find the pods; the StatefulSet its Service.
  const labels = pod.metadata.labels;
  assert.ok(matches(sts.spec.selector.matchLabels, labels));
  const headless = r.objects.find((o) => o.kind === 'Service' && o.spec.clusterIP === 'None');
  assert.equal(sts.spec.serviceName, headless.metadata.name, 'the StatefulSet names its headless Service');
  for (const svc of r.objects.filter((o) => o.kind === 'Service')) {
    assert.ok(matches(svc.spec.selector, labels), `Service ${svc.metadata.name} selects the pods`);
    assert.deepEqual(
      svc.spec.ports.map((x: Obj) => [x.name, x.port, x.targetPort]),
      [['http', cfg.http.port, 'http']],
    );
  }
  const pdb = one(r.objects, 'PodDisruptionBudget');
  assert.ok(matches(pdb.spec.selector.matchLabels, labels));
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.equal(sts.metadata.name, `${release}-weir`);
  return { sts, container, cfg };
}

test(`helm chart (no cluster runs here: helm ${HELM_VERSION} lint and template, strict decode into k8s.io/api types)`, { timeout: 1_800_000 }, async (t) => {
  await t.test('helm lint --strict: the defaults and every optional part on', async () => {
    const lint = await helm(['lint', CHART, '--strict']);
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
    const everything = await render('all', EVERYTHING);
    const withValues = await helm(['lint', CHART, '--strict', '--values', everything.values!]);
    assert.equal(withValues.code, 0, withValues.stdout + withValues.stderr);
  });

  await t.test('defaults: StatefulSet, two Services, PDB, two ConfigMaps; checked as above', async () => {
    const r = await render('edge');
    assert.deepEqual(r.objects.map((o) => o.kind).sort(), ['ConfigMap', 'ConfigMap', 'PodDisruptionBudget', 'Service', 'Service', 'StatefulSet']);
    const { sts, container, cfg } = await checkRender(r, 'edge');
    assert.equal(sts.spec.replicas, 2);
    assert.equal(sts.spec.podManagementPolicy, 'OrderedReady');
    const args: string[] = container.args;
    assert.equal(Number(args[args.indexOf('--grace-ms') + 1]), DEFAULT_GRACE_MS, "the chart's grace period is weir's default");
    // The dead letters persist: a volume claim per replica, kept when a replica is scaled away.
    assert.deepEqual(
      sts.spec.volumeClaimTemplates.map((c: Obj) => c.metadata.name),
      ['data'],
    );
    assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, { whenScaled: 'Retain', whenDeleted: 'Retain' });
    assert.ok('sink' in deadLetterPlace(cfg), 'dead letters go to PostgreSQL; the volume holds the fallback file');
    // No Secret named: no secretKeyRef, and no password in the environment.
    assert.ok(container.env.every((e: Obj) => !e.valueFrom?.secretKeyRef));
  });

  await t.test('every optional part on: monitors, autoscaler, existing Secret, HTTPS, five replicas', async () => {
    const r = await render('all', EVERYTHING);
    const { sts, container, cfg } = await checkRender(r, 'all');
    assert.equal(sts.spec.replicas, undefined, 'the autoscaler owns the replica count');
    assert.equal(sts.spec.podManagementPolicy, 'Parallel');
    const hpa = one(r.objects, 'HorizontalPodAutoscaler');
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts.metadata.name });
    assert.ok(hpa.spec.metrics.some((m: Obj) => m.type === 'Pods' && m.pods.metric.name === 'weir_ingest_held'));
    assert.equal(hpa.spec.behavior.scaleDown.policies[0].value, 1, 'scale-down one replica at a time');
    // Secrets by reference: each variable from the named Secret, once, never as a plain value.
    for (const [name, key] of Object.entries(EVERYTHING.secretEnv)) {
      const found = container.env.filter((e: Obj) => e.name === name);
      assert.deepEqual(found, [{ name, valueFrom: { secretKeyRef: { name: 'weir-secrets', key } } }]);
    }
    assert.equal(cfg.http.basic_auth?.password, secretStandIn('http-password'));
    assert.equal(cfg.broker.password, secretStandIn('mqtt-password'));
    // Monitors scrape the port the Service and the container name, over HTTPS, with credentials.
    const labels = sts.spec.template.metadata.labels;
    const sm = one(r.objects, 'ServiceMonitor');
    const pm = one(r.objects, 'PodMonitor');
    const svc = r.objects.find((o) => o.kind === 'Service' && o.spec.clusterIP !== 'None');
    assert.ok(matches(sm.spec.selector.matchLabels, svc.metadata.labels), 'the ServiceMonitor selects the Service');
    assert.ok(matches(pm.spec.selector.matchLabels, labels), 'the PodMonitor selects the pods');
    for (const ep of [sm.spec.endpoints[0], pm.spec.podMetricsEndpoints[0]]) {
      assert.equal(ep.port, 'http');
      assert.equal(ep.path, '/metrics');
      assert.equal(ep.scheme, 'https');
      assert.equal(ep.basicAuth.password.name, 'weir-metrics');
    }
    // No persistence asked: the data volume is an emptyDir (NOTES.txt says the file dies with the pod).
    assert.equal(sts.spec.volumeClaimTemplates, undefined);
    assert.ok(sts.spec.template.spec.volumes.some((v: Obj) => v.name === 'data' && v.emptyDir));
    assert.equal(cfg.broker.connections, 8, "the user's config is merged with the defaults");
    assert.equal(cfg.sinks.get('tsdb')?.settings.url, secretStandIn('pg-url'));
  });

  await t.test('NOTES.txt renders (helm install --dry-run=client, no cluster contacted) and names the presence topic', async () => {
    for (const values of [undefined, EVERYTHING]) {
      const args = ['install', 'edge', CHART, '--dry-run=client', '--namespace', 'telemetry'];
      if (values) args.push('--values', (await render('edge', values)).values!);
      const r = await helm(args);
      assert.equal(r.code, 0, r.stderr);
      const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
      assert.match(notes, /publish and subscribe under weir\/weir\/members\/#/);
      assert.match(notes, values ? /2-8 replicas \(autoscaled\)/ : /its keys: mqtt-password → WEIR_MQTT_PASSWORD, pg-url → WEIR_PG_URL\)/);
    }
  });

  await t.test('a config change rolls the replicas; a rules change does not (weir reloads rules)', async () => {
    const base = one((await render('weir')).objects, 'StatefulSet').spec.template.metadata.annotations['checksum/config'];
    const config = one((await render('weir', { config: { broker: { connections: 2 } } })).objects, 'StatefulSet');
    const rules = one((await render('weir', { rules: { 'other.yaml': 'id: other\nsql: SELECT * FROM "x/#"\nactions: []\n' } })).objects, 'StatefulSet');
    assert.notEqual(config.spec.template.metadata.annotations['checksum/config'], base);
    assert.equal(rules.spec.template.metadata.annotations['checksum/config'], base);
  });

  await t.test('refused at render: a grace period below the stop time, a dead-letter file outside the data volume, keys the chart owns', async () => {
    const low = await helm(['template', 'weir', CHART, '--set', 'terminationGracePeriodSeconds=30']);
    assert.notEqual(low.code, 0);
    assert.match(low.stderr, /terminationGracePeriodSeconds 30 is not above weir's stop time, 37 s/);
    const file = await helm(['template', 'weir', CHART, '--set', 'config.dead_letter.file=letters.jsonl']);
    assert.notEqual(file.code, 0);
    assert.match(file.stderr, /config\.dead_letter\.file "letters\.jsonl": weir writes it, and only the data volume is writable/);
    const id = await helm(['template', 'weir', CHART, '--set', 'config.broker.client_id=x']);
    assert.notEqual(id.code, 0);
    assert.match(id.stderr, /config\.broker\.client_id is set by the chart/);
  });

  await t.test('the validator refuses an unknown field, an unknown kind, and a probe on an undeclared port', async () => {
    const sts = one((await render('weir')).objects, 'StatefulSet');
    const typo = structuredClone(sts);
    typo.spec.template.spec.containers[0].livenessProbe.httpGet.paht = '/healthz';
    const r1 = await validate(stringify(typo));
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /unknown field "spec\.template\.spec\.containers\[0\]\.livenessProbe\.httpGet\.paht"/);
    const r2 = await validate('apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }\n');
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /example\.com\/v1 Widget: no API type known/);
    const sm = `apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: { name: m }\nspec:\n  selector: {}\n  endpoints: [{ port: http, intervall: 15s }]\n`;
    const r3 = await validate(sm);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /unknown field "spec\.endpoints\[0\]\.intervall"/);
    const port = structuredClone(sts);
    port.spec.template.spec.containers[0].readinessProbe.httpGet.port = 'metrics';
    const r4 = await validate(stringify(port));
    assert.equal(r4.code, 1);
    assert.match(r4.stderr, /a probe names port "metrics", which the container does not declare/);
  });
});
