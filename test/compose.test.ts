// docker-compose.yml without a Docker engine: parse it, check every service, image, port, volume,
// healthcheck and depends_on, that every host file it mounts exists, that the weir config the
// replicas mount passes weir's own loader with the compose environment applied, that Kafka and
// Pulsar are the versions the integration tests run, and that the Grafana dashboard imports into
// any Grafana (a DS_PROMETHEUS input, no datasource uid) and only queries metrics weir exports.
// Where a compose client is installed, `docker compose config -q` checks the file as Docker reads it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { testCommand } from '../src/cli/test.js';
import { loadConfig } from '../src/config/load.js';
import { createMetrics, registerProcessMetrics } from '../src/metrics/names.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string; interval?: string; timeout?: string; retries?: number };
  restart?: string;
}
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;

/** Compose's own interpolation as `docker compose up` does it with nothing set: `${X:-default}` → default. */
function interpolate(v: string): string {
  return v.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_m, def?: string) => def ?? '');
}
const envOf = (s: Service): Record<string, string> => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));

test('the stack has every service the issue lists, with pinned images', () => {
  const want: Record<string, RegExp> = {
    emqx: /^emqx\/emqx:5\.8\.6$/,
    timescaledb: /^timescale\/timescaledb:\d+\.\d+\.\d+-pg\d+$/,
    pulsar: /^apachepulsar\/pulsar:\d+\.\d+\.\d+$/,
    'pulsar-init': /^apachepulsar\/pulsar:\d+\.\d+\.\d+$/,
    kafka: /^apache\/kafka:\d+\.\d+\.\d+$/,
    'weir-a': /^weir:local$/,
    'weir-b': /^weir:local$/,
    prometheus: /^prom\/prometheus:v\d+\.\d+\.\d+$/,
    grafana: /^grafana\/grafana:\d+\.\d+\.\d+$/,
  };
  assert.deepEqual(Object.keys(services).sort(), Object.keys(want).sort());
  for (const [name, re] of Object.entries(want)) assert.match(services[name]!.image ?? '', re, `${name}: image`);
  assert.equal(services.pulsar!.image, services['pulsar-init']!.image, 'pulsar-init uses the broker image');
  assert.ok(services['weir-a']!.build && services['weir-b']!.build, 'the weir replicas build the repo Dockerfile');
});

test('host ports are unique and as documented', () => {
  const hostPorts = new Map<string, string>();
  for (const [name, s] of Object.entries(services)) {
    for (const p of s.ports ?? []) {
      const [host, container] = p.split(':');
      assert.match(p, /^\d+:\d+$/, `${name}: port ${p}`);
      assert.ok(!hostPorts.has(host!), `host port ${host} used by ${hostPorts.get(host!)} and ${name}`);
      hostPorts.set(host!, name);
      assert.ok(Number(container) > 0);
    }
  }
  const expect: Record<string, string> = {
    '1883': 'emqx',
    '18083': 'emqx',
    '5432': 'timescaledb',
    '6650': 'pulsar',
    '8080': 'pulsar',
    '29092': 'kafka',
    '9464': 'weir-a',
    '9465': 'weir-b',
    '9090': 'prometheus',
    '3000': 'grafana',
  };
  for (const [port, name] of Object.entries(expect)) assert.equal(hostPorts.get(port), name, `host port ${port}`);
});

test('volumes: named ones are declared, every mounted host file exists', () => {
  const declared = new Set(Object.keys(compose.volumes ?? {}));
  const used = new Set<string>();
  for (const [name, s] of Object.entries(services)) {
    for (const v of s.volumes ?? []) {
      const [src, dst, mode] = v.split(':');
      assert.ok(dst?.startsWith('/'), `${name}: ${v} has an absolute container path`);
      if (mode !== undefined) assert.equal(mode, 'ro', `${name}: ${v}`);
      if (src!.startsWith('.')) {
        assert.ok(existsSync(join(ROOT, src!)), `${name}: mounted host path ${src} does not exist`);
        assert.equal(mode, 'ro', `${name}: host files are mounted read-only (${v})`);
      } else {
        assert.ok(declared.has(src!), `${name}: volume ${src} is not declared at the top level`);
        used.add(src!);
      }
    }
  }
  assert.deepEqual([...declared].sort(), [...used].sort(), 'every declared volume is used');
});

test('healthchecks and depends_on: every long-running service is checked, start order waits on health', () => {
  for (const [name, s] of Object.entries(services)) {
    if (s.restart === 'no') continue; // one-shot init containers
    const t = s.healthcheck?.test;
    assert.ok(Array.isArray(t) && ['CMD', 'CMD-SHELL'].includes(t[0]!) && t.length > 1, `${name}: healthcheck`);
    assert.match(s.healthcheck!.interval ?? '', /^\d+s$/, `${name}: healthcheck interval`);
    assert.ok((s.healthcheck!.retries ?? 0) > 0, `${name}: healthcheck retries`);
    assert.equal(s.restart, 'unless-stopped', `${name}: restart policy`);
  }
  for (const [name, s] of Object.entries(services)) {
    for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
      const target = services[dep];
      assert.ok(target, `${name} depends on unknown service ${dep}`);
      if (condition === 'service_healthy') assert.ok(target.healthcheck, `${name} waits for ${dep} to be healthy, which has no healthcheck`);
      else if (condition === 'service_completed_successfully') assert.equal(target.restart, 'no', `${name} waits for ${dep} to complete: it must be one-shot`);
      else assert.equal(condition, 'service_started', `${name} → ${dep}: condition ${condition}`);
    }
  }
  for (const w of ['weir-a', 'weir-b']) {
    assert.deepEqual(
      Object.keys(services[w]!.depends_on ?? {}).sort(),
      ['emqx', 'kafka', 'pulsar-init', 'timescaledb'],
      `${w} waits for the broker and every sink`,
    );
  }
  assert.ok(services.grafana!.depends_on?.prometheus, 'grafana after prometheus');
  assert.equal(services['pulsar-init']!.depends_on?.pulsar?.condition, 'service_healthy');
});

test('EMQX: the seed configuration with the inflight and queue settings ack-after-commit needs', () => {
  const env = envOf(services.emqx!);
  assert.equal(env.EMQX_NODE__NAME, 'emqx@emqx-node1.cluster.local');
  const weirCfg = parse(readFileSync(join(ROOT, 'deploy/weir.compose.yaml'), 'utf8')) as { broker: { max_unacked: number } };
  const inflight = Number(env.EMQX_MQTT__MAX_INFLIGHT);
  assert.ok(
    inflight >= weirCfg.broker.max_unacked && inflight <= 65_535,
    `max_inflight ${inflight}: at least weir's broker.max_unacked (${weirCfg.broker.max_unacked}), at most EMQX's limit`,
  );
  assert.equal(env.EMQX_MQTT__MAX_MQUEUE_LEN, '0', 'queue unbounded while a replica restarts');
  assert.equal(env.EMQX_MQTT__MQUEUE_STORE_QOS0, 'false');
  const conf = readFileSync(join(ROOT, 'deploy/emqx/emqx.conf'), 'utf8');
  for (const key of ['max_inflight = 32768', 'max_mqueue_len = 0', 'mqueue_store_qos0 = false', 'discovery_strategy = manual', 'http.bind = 18083'])
    assert.ok(conf.includes(key), `emqx.conf: ${key}`);
  assert.equal(String(env.EMQX_MQTT__MAX_INFLIGHT), /max_inflight = (\d+)/.exec(conf)![1], 'env and emqx.conf agree');
});

test('Kafka runs in KRaft mode; Pulsar gets the 10-partition topic the weir config writes to', () => {
  const k = envOf(services.kafka!);
  assert.match(k.KAFKA_PROCESS_ROLES ?? '', /broker/);
  assert.match(k.KAFKA_PROCESS_ROLES ?? '', /controller/);
  assert.ok(!Object.keys(k).some((n) => n.includes('ZOOKEEPER')), 'no ZooKeeper');
  assert.equal(Buffer.from(k.CLUSTER_ID!, 'base64url').length, 16, 'CLUSTER_ID is 16 bytes in base64url');
  assert.match(k.KAFKA_CONTROLLER_QUORUM_VOTERS ?? '', new RegExp(`^${k.KAFKA_NODE_ID}@kafka:9093$`));
  assert.match(k.KAFKA_ADVERTISED_LISTENERS ?? '', /PLAINTEXT:\/\/kafka:9092/);
  const init = [services['pulsar-init']!.command].flat().join(' ');
  assert.match(init, /create-partitioned-topic persistent:\/\/public\/default\/telemetry --partitions 10/);
  assert.match([services.pulsar!.command].flat().join(' '), /standalone/);
});

/** The replica's config as the container sees it: the mounted files at their container paths. */
function mountedConfig(service: string): string {
  const dir = mkdtempSync(join(tmpdir(), `weir-compose-${service}-`));
  for (const v of services[service]!.volumes ?? []) {
    const [src, dst] = v.split(':');
    if (!src!.startsWith('.') || !dst!.startsWith('/etc/weir/')) continue;
    const target = join(dir, dst!);
    mkdirSync(dirname(target), { recursive: true });
    assert.ok(statSync(join(ROOT, src!)).isFile(), `${v}: weir's mounts are single files`);
    copyFileSync(join(ROOT, src!), target);
  }
  const cmd = [services[service]!.command].flat();
  const cfg = cmd[cmd.indexOf('--config') + 1]!;
  return join(dir, cfg);
}

test("both weir replicas: their mounted config passes weir's own validation, one share group, distinct ids", () => {
  const seen = new Map<string, string>();
  for (const w of ['weir-a', 'weir-b']) {
    const file = mountedConfig(w);
    try {
      const env = envOf(services[w]!);
      const cfg = loadConfig(file, env);
      assert.equal(cfg.broker.share_group, 'weir');
      assert.equal(cfg.broker.client_id, env.WEIR_CLIENT_ID);
      assert.equal(cfg.broker.ack, 'after_commit');
      assert.equal(cfg.broker.url, 'mqtt://emqx:1883');
      assert.deepEqual([...cfg.sinks.values()].map((s) => s.sinkType.type).sort(), ['kafka', 'postgres', 'pulsar']);
      assert.deepEqual(cfg.rules.map((r) => r.id).sort(), ['telemetry_to_kafka', 'telemetry_to_pulsar', 'telemetry_to_tsdb']);
      const pulsar = [...cfg.sinks.values()].find((s) => s.sinkType.type === 'pulsar')!;
      assert.equal(pulsar.settings.topic, 'persistent://public/default/telemetry');
      assert.equal(pulsar.settings.service_url, 'pulsar://pulsar:6650');
      const pg = [...cfg.sinks.values()].find((s) => s.sinkType.type === 'postgres')!;
      assert.match(String(pg.settings.url), /@timescaledb:5432\//);
      assert.equal(cfg.http.port, 9464);
      assert.ok(!seen.has(cfg.broker.client_id), 'each replica has its own client id');
      seen.set(cfg.broker.client_id, w);
    } finally {
      rmSync(dirname(dirname(dirname(file))), { recursive: true, force: true });
    }
  }
  const port = (w: string) => services[w]!.ports![0]!.split(':')[1];
  assert.equal(port('weir-a'), envOf(services['weir-a']!).WEIR_HTTP_PORT);
  assert.equal(port('weir-b'), envOf(services['weir-b']!).WEIR_HTTP_PORT);
});

test('the compose-only rules in deploy/rules pass their own tests', async () => {
  assert.equal(await testCommand.run([join(ROOT, 'deploy/rules')]), 0);
});

test("Prometheus scrapes both replicas; Grafana has its datasource and a dashboard of weir's metrics", () => {
  const prom = parse(readFileSync(join(ROOT, 'docs/prometheus.yml'), 'utf8')) as {
    scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
  };
  const targets = prom.scrape_configs.find((j) => j.job_name === 'weir')!.static_configs.flatMap((c) => c.targets);
  assert.deepEqual(targets.sort(), ['weir-a:9464', 'weir-b:9464']);

  const dsDir = join(ROOT, 'docs/grafana/provisioning/datasources');
  const ds = parse(readFileSync(join(dsDir, 'prometheus.yaml'), 'utf8')) as { datasources: Array<{ uid: string; type: string; url: string }> };
  assert.equal(ds.datasources[0]!.type, 'prometheus');
  assert.equal(ds.datasources[0]!.url, 'http://prometheus:9090');
  const provider = parse(readFileSync(join(ROOT, 'docs/grafana/provisioning/dashboards/weir.yaml'), 'utf8')) as {
    providers: Array<{ options: { path: string } }>;
  };
  const dashMount = services.grafana!.volumes!.find((v) => v.startsWith('./docs/grafana/dashboards:'))!;
  assert.equal(dashMount.split(':')[1], provider.providers[0]!.options.path, 'the provider reads where the dashboards are mounted');

  const dash = readDashboard();
  const rows = dash.panels.filter((p) => p.type === 'row').map((p) => p.title);
  for (const section of ['Ingest', 'Rules', 'Sinks', 'Latency', 'Dead letters', 'Reconciliation'])
    assert.ok(rows.includes(section), `dashboard row ${section}`);
  const usedMetrics = new Set(dash.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => t.expr.match(/\bweir_[a-z0-9_]+/g) ?? [])));
  for (const m of [
    'weir_rule_matched_total',
    'weir_sink_success_total',
    'weir_ingest_received_total',
    'weir_sink_batch_latency_seconds_bucket',
    'weir_dead_letter_total',
  ]) {
    assert.ok(usedMetrics.has(m), `the dashboard shows ${m}`);
  }
});

interface DashDatasource {
  type?: string;
  uid?: string;
}
interface DashPanel {
  type: string;
  title: string;
  description?: string;
  datasource?: DashDatasource;
  targets?: Array<{ expr: string; datasource?: DashDatasource }>;
}
interface DashVariable {
  name: string;
  type: string;
  query?: string | { query: string };
  datasource?: DashDatasource;
}
interface Dashboard {
  __inputs?: Array<{ name: string; type: string; pluginId: string }>;
  templating: { list: DashVariable[] };
  panels: DashPanel[];
}
const readDashboard = () => JSON.parse(readFileSync(join(ROOT, 'docs/grafana/dashboards/weir.json'), 'utf8')) as Dashboard;

/** The registry of a running weir: src/metrics/names.ts's metrics and the process's (CPU, memory, event loop). */
function weirRegistry() {
  const { registry } = createMetrics();
  registerProcessMetrics(registry, '0.0.0-test');
  return registry;
}

/** Every metric src/metrics/names.ts declares, with a histogram's series suffixes. */
function metricsWeirDefines(): Set<string> {
  const known = new Set<string>();
  for (const m of weirRegistry().getMetricsAsArray()) {
    known.add(m.name);
    for (const suffix of ['_bucket', '_sum', '_count']) known.add(m.name + suffix);
  }
  return known;
}

/** Every `datasource` object anywhere in the dashboard, with where it is. */
function datasourcesIn(v: unknown, at: string, out: Array<[string, DashDatasource]> = []): Array<[string, DashDatasource]> {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) datasourcesIn(x, `${at}[${i}]`, out);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'datasource' && x && typeof x === 'object') out.push([`${at}.${k}`, x as DashDatasource]);
      datasourcesIn(x, `${at}.${k}`, out);
    }
  }
  return out;
}

test('the Grafana dashboard imports into an existing Grafana: a DS_PROMETHEUS input, no hard-coded datasource uid', () => {
  const dash = readDashboard();
  assert.deepEqual(
    dash.__inputs?.map(({ name, type, pluginId }) => ({ name, type, pluginId })),
    [{ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }],
  );
  const found = datasourcesIn(dash, 'dashboard');
  assert.ok(found.length > 20, 'panels and queries name their datasource');
  for (const [where, ds] of found) assert.deepEqual(ds, { type: 'prometheus', uid: '${DS_PROMETHEUS}' }, `${where}: the input, not a uid of one Grafana`);
  // Provisioned by file (docker-compose.yml) Grafana does not fill __inputs: a datasource variable of
  // the same name resolves ${DS_PROMETHEUS} there, to the default Prometheus.
  const dsVar = dash.templating.list.find((v) => v.name === 'DS_PROMETHEUS');
  assert.equal(dsVar?.type, 'datasource');
  assert.equal(dsVar?.query, 'prometheus');
});

test('the Grafana dashboard: instance, rule and sink variables filter every query, which use only metrics src/metrics/names.ts defines', () => {
  const dash = readDashboard();
  const known = metricsWeirDefines();
  const registry = weirRegistry();
  const metricsIn = (expr: string, where: string) => {
    const names = expr.match(/\bweir_[a-z0-9_]+/g) ?? [];
    for (const name of names) assert.ok(known.has(name), `${where}: ${name} is not a metric weir exports (src/metrics/names.ts)`);
    return names;
  };
  for (const name of ['instance', 'rule', 'sink']) {
    const v = dash.templating.list.find((x) => x.name === name);
    assert.equal(v?.type, 'query', `variable ${name}`);
    const q = typeof v!.query === 'string' ? v!.query : v!.query!.query;
    assert.match(q, new RegExp(`^label_values\\(.+, ${name}\\)$`), `variable ${name}: its label's values`);
    assert.equal(metricsIn(q, `variable ${name}`).length, 1);
  }
  const panels = dash.panels.filter((p) => p.type !== 'row');
  for (const p of panels) {
    assert.ok(p.targets?.length, `${p.title}: no query`);
    for (const t of p.targets!) {
      const names = metricsIn(t.expr, p.title);
      assert.ok(names.length > 0, `${p.title}: ${t.expr} queries no weir metric`);
      // each selector filters by the variables its metric has labels for
      for (const m of t.expr.matchAll(/\b(weir_[a-z0-9_]+)(\{[^}]*\})?/g)) {
        const labels =
          (registry.getSingleMetric(m[1]!.replace(/_(bucket|sum|count)$/, '')) as unknown as { labelNames: string[] } | undefined)?.labelNames ?? [];
        const sel = m[2] ?? '';
        assert.ok(sel.includes('instance=~"$instance"'), `${p.title}: ${m[1]} is not filtered by $instance`);
        for (const l of ['rule', 'sink']) if (labels.includes(l)) assert.ok(sel.includes(`${l}=~"$${l}"`), `${p.title}: ${m[1]} is not filtered by $${l}`);
      }
    }
  }
  // weir exports no metric of the reconciliation difference: the panel is matched beside stored +
  // dead-lettered per rule, and says so.
  const rec = panels.find((p) => /matched vs stored \+ dead-lettered/i.test(p.title));
  assert.ok(rec, 'a reconciliation panel');
  assert.ok(![...known].some((n) => /reconcil|difference/.test(n)), 'names.ts now has a difference metric: chart it instead');
  assert.match(rec.description ?? '', /no metric of the reconciliation difference/);
  const exprs = rec.targets!.map((t) => t.expr.replace(/\{[^}]*\}/g, ''));
  assert.ok(
    exprs.some((e) =>
      /sum by \(rule\) \(weir_sink_matched_total\) - \(sum by \(rule\) \(weir_sink_success_total\) \+ sum by \(rule\) \(weir_sink_dead_lettered_total\)\)/.test(
        e,
      ),
    ),
    'the difference per rule',
  );
});

/** `<version>` in a test broker's pom.xml: what the integration tests run. */
function pomVersion(broker: string, property: string): string {
  const pom = readFileSync(join(ROOT, `test/brokers/${broker}/pom.xml`), 'utf8');
  const v = new RegExp(`<${property}>([^<]+)</${property}>`).exec(pom)?.[1];
  assert.ok(v, `test/brokers/${broker}/pom.xml has no <${property}>`);
  return v;
}

test('the compose stack runs the Kafka and Pulsar versions the test suite runs (test/brokers/*/pom.xml)', () => {
  const kafka = pomVersion('kafka', 'kafka.version');
  const pulsar = pomVersion('pulsar', 'pulsar.version');
  assert.equal(services.kafka!.image, `apache/kafka:${kafka}`, 'docker-compose.yml kafka: the version test/brokers/kafka/pom.xml tests');
  for (const s of ['pulsar', 'pulsar-init'])
    assert.equal(services[s]!.image, `apachepulsar/pulsar:${pulsar}`, `docker-compose.yml ${s}: the version test/brokers/pulsar/pom.xml tests`);
  const ops = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  for (const image of [services.kafka!.image!, services.pulsar!.image!]) assert.ok(ops.includes(`\`${image}\``), `docs/operations.md names ${image}`);
});

test('docker compose config -q accepts the file', (t) => {
  const tryRun = (cmd: string, args: string[]) => spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const docker = tryRun('docker', ['compose', 'version']);
  let run: (args: string[]) => ReturnType<typeof spawnSync>;
  if (docker.status === 0) run = (args) => tryRun('docker', ['compose', ...args]);
  else if (tryRun('docker-compose', ['version']).status === 0) run = (args) => tryRun('docker-compose', args);
  else {
    const client = docker.error ? 'no docker client is installed' : 'the docker client has no compose plugin, and no docker-compose is installed';
    t.skip(`${client}: the compose client's own check did not run (the parse checks above did)`);
    return;
  }
  const r = run(['-f', 'docker-compose.yml', 'config', '-q']);
  assert.equal(r.status, 0, `compose config failed:\n${String(r.stderr)}${String(r.stdout)}`);
});
