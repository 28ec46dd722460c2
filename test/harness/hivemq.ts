// A real HiveMQ Community Edition broker for the integration tests, the second MQTT broker beside
// Mosquitto: embedded HiveMQ CE from Maven Central (test/brokers/hivemq/fetch.sh resolves the jars
// into .it/hivemq/lib and compiles the launcher into .it/hivemq/classes), on a free loopback port,
// with file persistence in a data directory that survives stop()/start() and kill()/start().
//
//   const h = await startHivemq();     // h.url = 'mqtt://127.0.0.1:PORT'
//   await h.stop(); await h.start();   // graceful (SIGTERM), same port, same data
//   await h.kill(); await h.start();   // SIGKILL: whatever HiveMQ had not written is gone
//   await h.dispose();                 // stop and delete the data
//
//   const { url } = await sharedHivemq();   // WEIR_TEST_HIVEMQ's broker, or one for this process
//
// Started as a program it starts one broker, prints {"url": ...} and runs until SIGTERM.
// What the config must set, and why, is in ../shared/notes/hivemq.md and docs/operations.md.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fetchJars, jvmWatchdog } from './jvm.js';
import { freePort, startService, tempDir, waitFor, waitForPort, type Service } from './process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FETCH = join(ROOT, 'test/brokers/hivemq/fetch.sh');
const LIB = join(ROOT, '.it/hivemq/lib');
const CLASSES = join(ROOT, '.it/hivemq/classes');
const READY_TIMEOUT_MS = 60_000;
/** SIGTERM → SIGKILL: a graceful stop closes the persistence, measured at ~5.5 s. */
const STOP_GRACE_MS = 30_000;

export interface HivemqBroker {
  readonly url: string;
  readonly port: number;
  /** SIGTERM: HiveMQ stops gracefully and closes its persistence; the data directory stays. */
  stop(): Promise<void>;
  /** Starts it again after stop() or kill(), on the same port and data; resolves when ready. */
  start(): Promise<void>;
  /** SIGKILL: what the broker had not written to disk is lost. */
  kill(): Promise<void>;
  /** Stops the broker and deletes its directory. */
  dispose(): Promise<void>;
  /** How long the last start took, from spawning the JVM to "started". */
  readonly startupMs: number;
  readonly dir: string;
}

export interface StartHivemqOptions {
  /**
   * QoS 1/2 messages in flight to one subscriber connection: HiveMQ CE caps the client's Receive
   * Maximum at an internal constant of 50 (no config.xml element); the launcher sets it before the
   * start. Default 50, HiveMQ's own value, so the tests see the broker as shipped.
   */
  inflightWindow?: number;
}

/** Resolves the jars and compiles the launcher unless both are there for the current sources. */
export function ensureHivemq(): Promise<void> {
  return fetchJars('hivemq', FETCH, ROOT);
}

function configXml(port: number): string {
  return `<?xml version="1.0"?>
<hivemq>
  <listeners>
    <tcp-listener>
      <port>${port}</port>
      <bind-address>127.0.0.1</bind-address>
    </tcp-listener>
  </listeners>
  <mqtt>
    <!-- Default 1000 per client, strategy discard: a sink outage longer than that would lose
         messages queued for weir's offline session. -->
    <queued-messages>
      <max-queue-size>10000000</max-queue-size>
      <strategy>discard</strategy>
    </queued-messages>
    <!-- Default 10 unacked PUBLISHes per publisher; a publisher that ignores it (mqtt.js 5.16
         does) is disconnected with 0x93. -->
    <receive-maximum>
      <server-receive-maximum>65535</server-receive-maximum>
    </receive-maximum>
  </mqtt>
  <persistence>
    <mode>file</mode>
  </persistence>
  <!-- No internet here; and no test should phone home. -->
  <anonymous-usage-statistics>
    <enabled>false</enabled>
  </anonymous-usage-statistics>
</hivemq>
`;
}

const LOGBACK = `<configuration scan="false">
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d %level %logger{20} - %msg%n%ex</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="OUT"/></root>
  <logger name="jetbrains.exodus" level="WARN"/>
  <logger name="oshi" level="ERROR"/>
  <logger name="migrations" level="WARN"/>
</configuration>
`;

export async function startHivemq(opts: StartHivemqOptions = {}): Promise<HivemqBroker> {
  await ensureHivemq();
  const dir = tempDir('hivemq');
  const confDir = join(dir, 'conf');
  const dataDir = join(dir, 'data');
  const extDir = join(dir, 'extensions');
  for (const d of [confDir, dataDir, extDir]) mkdirSync(d, { recursive: true });
  const port = await freePort();
  writeFileSync(join(confDir, 'config.xml'), configXml(port));
  writeFileSync(join(confDir, 'logback.xml'), LOGBACK);
  const jvm = [
    '-Xms64m',
    '-Xmx768m',
    '-XX:+UseG1GC',
    '-Djava.net.preferIPv4Stack=true',
    ...(opts.inflightWindow ? [`-Dweir.hivemq.inflight=${opts.inflightWindow}`] : []),
    ...(process.env.WEIR_HIVEMQ_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean),
    '-cp',
    `${CLASSES}:${LIB}/*`,
    'weir.it.hivemq.Launcher',
    confDir,
    dataDir,
    extDir,
  ];

  let svc: Service | undefined;
  let launches = 0;
  let startupMs = 0;
  let disposed = false;

  const launch = async (): Promise<void> => {
    const t0 = Date.now();
    // One log per start: "started" from an earlier run must not count.
    const logFile = join(dir, `hivemq-${++launches}.log`);
    const s = startService('java', jvm, logFile);
    svc = s;
    s.unref();
    if (s.proc.pid !== undefined) jvmWatchdog(s.proc.pid, dir);
    try {
      await waitFor(
        () => {
          if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error('exited');
          return readFileSync(logFile, 'utf8').includes('weir-hivemq: started');
        },
        READY_TIMEOUT_MS,
        'hivemq to start',
        100,
      );
      await waitForPort(port, 5_000, s);
    } catch (err) {
      await s.stop(5_000);
      throw new Error(`hivemq: broker on ${port} did not start: ${(err as Error).message}\n--- ${logFile} (tail) ---\n${s.tail(60)}`);
    }
    startupMs = Date.now() - t0;
  };

  const halt = async (signal: 'SIGTERM' | 'SIGKILL'): Promise<void> => {
    const s = svc;
    svc = undefined;
    if (!s) return;
    return signal === 'SIGTERM' ? s.stop(STOP_GRACE_MS) : s.kill();
  };

  const broker: HivemqBroker = {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    dir,
    get startupMs() {
      return startupMs;
    },
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    async start() {
      if (disposed) throw new Error('hivemq: start() after dispose()');
      if (svc) return;
      await launch();
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await launch();
  } catch (err) {
    disposed = true;
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return broker;
}

let shared: Promise<{ url: string }> | undefined;

/**
 * The broker every test file of a run shares: WEIR_TEST_HIVEMQ's (`{"url":"mqtt://..."}`, set by
 * the test runner), or else one started for this process and removed by its watchdog once the
 * process has exited. Tests that stop or kill a broker use startHivemq().
 */
export function sharedHivemq(): Promise<{ url: string }> {
  const env = process.env.WEIR_TEST_HIVEMQ;
  if (env) return Promise.resolve(JSON.parse(env) as { url: string });
  shared ??= startHivemq().then((b) => ({ url: b.url }));
  return shared;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const h = await startHivemq();
  process.stdout.write(`${JSON.stringify({ url: h.url })}\n`);
  process.stderr.write(`hivemq: ready on ${h.url} in ${h.startupMs} ms (data ${h.dir})\n`);
  const keep = setInterval(() => {}, 1 << 30);
  const bye = (): void => {
    clearInterval(keep);
    void h.dispose().then(() => process.exit(0));
  };
  process.once('SIGTERM', bye);
  process.once('SIGINT', bye);
}
