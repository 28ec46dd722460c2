// A real Apache Pulsar standalone broker for the integration tests, run with `java` from jars that
// test/brokers/pulsar/fetch.sh copies out of Maven Central (see docs/pulsar.md). Each broker gets
// a fresh working directory and free loopback ports; stop()/start() restart it on the same ports
// and data, dispose() stops it and deletes its directory. Run as a program
// (`node --import tsx test/harness/pulsar.ts`), it starts one broker for a whole test run, prints
// `{"serviceUrl":…,"httpUrl":…}` on one line (the value of WEIR_TEST_PULSAR) and keeps it until
// SIGTERM/SIGINT.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchJars, jvmWatchdog } from './jvm.js';
import { type BrokerProcess, brokerProcess, runAsProgram, waitWhileRunning } from './broker-process.js';
import { freePort, startService, tempDir } from './process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BROKER_DIR = join(ROOT, 'test/brokers/pulsar');
const LIB_DIR = join(ROOT, '.it/pulsar/lib');

export interface PulsarEndpoints {
  /** pulsar://127.0.0.1:<port> */
  readonly serviceUrl: string;
  /** http://127.0.0.1:<port> (admin REST and WebSocket API) */
  readonly httpUrl: string;
}

export interface PulsarBroker extends PulsarEndpoints, BrokerProcess {
  /** pulsar+ssl://127.0.0.1:<port>, when started with `tls`. */
  readonly serviceUrlTls?: string;
  /** Where the broker's output goes. */
  readonly logFile: string;
}

/** JVM flags: small heap for a 2-core box shared with other brokers; the --add-opens Pulsar's bin/pulsar passes. */
const JVM_FLAGS = [
  '-Xms128m',
  '-Xmx512m',
  '-XX:MaxDirectMemorySize=512m',
  '-XX:+UseG1GC',
  '-XX:ParallelGCThreads=2',
  '-XX:ConcGCThreads=1',
  '-XX:CICompilerCount=2',
  '-XX:+ExitOnOutOfMemoryError',
  '-Dpulsar.allocator.exit_on_oom=true',
  '-Djava.net.preferIPv4Stack=true',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '-Dlog4j2.is.webapp=false',
  ...[
    'java.base/java.io',
    'java.base/java.util.zip',
    'java.base/java.nio',
    'java.base/jdk.internal.misc',
    'java.management/sun.management',
    'jdk.management/com.sun.management.internal',
    'java.base/jdk.internal.platform',
    'java.base/sun.net',
  ].flatMap((m) => ['--add-opens', `${m}=ALL-UNNAMED`]),
];

const START_TIMEOUT_MS = Number(process.env.WEIR_PULSAR_START_TIMEOUT_MS ?? 180_000);

/** Runs fetch.sh, which returns at once when the jars for this pom are already in .it/pulsar/lib. */
export async function ensurePulsarJars(): Promise<string> {
  // fetch.sh hashes pom.xml + settings.xml and returns at once when the jars match them.
  await fetchJars('pulsar', join(BROKER_DIR, 'fetch.sh'), ROOT, 30 * 60_000);
  if (!existsSync(join(LIB_DIR, '.fetched'))) throw new Error(`Pulsar jars missing in ${LIB_DIR} after fetch.sh`);
  return LIB_DIR;
}

async function httpStatus(url: string, init?: RequestInit): Promise<number> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
  await res.arrayBuffer();
  return res.status;
}

/** Starts a fresh standalone broker on free ports; resolves when the broker accepts admin calls and topic creation. */
export interface StartOptions {
  /** Extra or overriding standalone.conf keys (e.g. authentication settings for one test). */
  readonly conf?: Readonly<Record<string, string>>;
  /** Serve the binary protocol over TLS too, with these PEM files (key in PKCS#8). */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /** Bearer token for the harness's own admin calls, when `conf` turns authentication on. */
  readonly adminToken?: string;
  /** Internal: let the JVM's pipes not keep this process alive (sharedPulsar). */
  readonly unref?: boolean;
}

export async function startPulsar(opts: StartOptions = {}): Promise<PulsarBroker> {
  const lib = await ensurePulsarJars();
  const dir = tempDir('pulsar');
  const [brokerPort, httpPort, bookiePort] = [await freePort(), await freePort(), await freePort()];
  let conf = readFileSync(join(BROKER_DIR, 'standalone.conf'), 'utf8')
    .replaceAll('@BROKER_PORT@', String(brokerPort))
    .replaceAll('@HTTP_PORT@', String(httpPort));
  const tlsPort = opts.tls ? await freePort() : undefined;
  const extra: Record<string, string> = { ...opts.conf };
  if (opts.tls) {
    Object.assign(extra, { brokerServicePortTls: String(tlsPort), tlsCertificateFilePath: opts.tls.certFile, tlsKeyFilePath: opts.tls.keyFile });
  }
  for (const [key, value] of Object.entries(extra)) {
    conf = conf.replace(new RegExp(`^${key}=.*$\\n?`, 'm'), '');
    conf += `${key}=${value}\n`;
  }
  writeFileSync(join(dir, 'standalone.conf'), conf);
  copyFileSync(join(BROKER_DIR, 'log4j2.xml'), join(dir, 'log4j2.xml'));

  const serviceUrl = `pulsar://127.0.0.1:${brokerPort}`;
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const logFile = join(dir, 'pulsar.log');
  const life = await brokerProcess('pulsar', dir, 15_000, async () => {
    const t0 = Date.now();
    const s = startService(
      'java',
      [
        ...JVM_FLAGS,
        `-Dlog4j.configurationFile=${join(dir, 'log4j2.xml')}`,
        '-cp',
        `${lib}/*`,
        'org.apache.pulsar.PulsarStandaloneStarter',
        '-c',
        join(dir, 'standalone.conf'),
        '-nfw',
        '-nss',
        '--bookkeeper-port',
        String(bookiePort),
      ],
      logFile,
      { cwd: dir, env: { ...process.env, OTEL_SDK_DISABLED: 'true' } },
    );
    if (s.proc.pid !== undefined) jvmWatchdog(s.proc.pid, dir);
    // The JVM and its pipes must not keep a test process alive once its tests are done.
    if (opts.unref) s.unref();
    // The namespace public/default is created last during start-up: once it answers, the broker is up.
    const auth: RequestInit = opts.adminToken ? { headers: { authorization: `Bearer ${opts.adminToken}` } } : {};
    try {
      await waitWhileRunning(
        s,
        async () => (await httpStatus(`${httpUrl}/admin/v2/namespaces/public/default`, auth)) === 200,
        START_TIMEOUT_MS,
        `Pulsar admin API at ${httpUrl}`,
      );
      // Then a throw-away topic proves that the bookie takes writes (ledger creation).
      await waitWhileRunning(
        s,
        async () => {
          const st = await httpStatus(`${httpUrl}/admin/v2/persistent/public/default/weir-harness-ready`, { ...auth, method: 'PUT' });
          return st === 204 || st === 409;
        },
        60_000,
        'Pulsar topic creation',
      );
    } catch (err) {
      await s.stop(15_000);
      throw new Error(`Pulsar did not start (${String(err)}); log ${logFile}:\n${s.tail(60)}`);
    }
    if (process.env.WEIR_TEST_VERBOSE) process.stderr.write(`pulsar ready in ${Date.now() - t0} ms at ${serviceUrl}\n`);
    return s;
  });
  return Object.assign(life, {
    serviceUrl,
    httpUrl,
    ...(tlsPort ? { serviceUrlTls: `pulsar+ssl://127.0.0.1:${tlsPort}` } : {}),
    logFile,
  });
}

let shared: Promise<PulsarEndpoints> | undefined;

/**
 * The run's shared broker: the one named in WEIR_TEST_PULSAR (JSON `{serviceUrl, httpUrl}`, set by
 * the test runner that started it), else one started for this process and disposed at its exit.
 */
export function sharedPulsar(): Promise<PulsarEndpoints> {
  if (shared) return shared;
  const fromEnv = process.env.WEIR_TEST_PULSAR;
  if (fromEnv) {
    const v = JSON.parse(fromEnv) as PulsarEndpoints;
    shared = Promise.resolve({ serviceUrl: v.serviceUrl, httpUrl: v.httpUrl });
    return shared;
  }
  shared = startPulsar({ unref: true }).then((b) => {
    disposeAtExit(b);
    return { serviceUrl: b.serviceUrl, httpUrl: b.httpUrl };
  });
  return shared;
}

function disposeAtExit(b: PulsarBroker): void {
  let done = false;
  const kill = () => {
    if (done) return;
    done = true;
    // 'exit' handlers cannot await: kill the JVM synchronously, leave the temp dir to the OS.
    void b.dispose();
  };
  process.once('beforeExit', () => {
    void b.dispose().then(() => {
      done = true;
    });
  });
  process.once('exit', kill);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void b.dispose().finally(() => process.exit(130));
    });
  }
}

// As a program: one broker for a whole test run (test/run.mjs puts the printed line in WEIR_TEST_PULSAR).
await runAsProgram(
  import.meta.url,
  () => startPulsar(),
  (b) => ({ serviceUrl: b.serviceUrl, httpUrl: b.httpUrl }),
  (b) => `pulsar: ready at ${b.serviceUrl} ${b.httpUrl} in ${b.startupMs} ms (log ${b.logFile})`,
);
