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
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchJars, jvmWatchdog } from './jvm.js';
import { type BrokerProcess, brokerProcess, runAsProgram, waitWhileRunning } from './broker-process.js';
import { freePort, startService, tempDir, waitForPort } from './process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FETCH = join(ROOT, 'test/brokers/hivemq/fetch.sh');
const LIB = join(ROOT, '.it/hivemq/lib');
const CLASSES = join(ROOT, '.it/hivemq/classes');
const READY_TIMEOUT_MS = 60_000;
/** SIGTERM → SIGKILL: a graceful stop closes the persistence, measured at ~5.5 s. */
const STOP_GRACE_MS = 30_000;

/** stop(): HiveMQ closes its persistence; startupMs: from spawning the JVM to "started". */
export interface HivemqBroker extends BrokerProcess {
  readonly url: string;
  readonly port: number;
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

  let launches = 0;
  const life = await brokerProcess('hivemq', dir, STOP_GRACE_MS, async () => {
    // One log per start: "started" from an earlier run must not count.
    const logFile = join(dir, `hivemq-${++launches}.log`);
    const s = startService('java', jvm, logFile);
    s.unref();
    if (s.proc.pid !== undefined) jvmWatchdog(s.proc.pid, dir);
    try {
      await waitWhileRunning(s, () => readFileSync(logFile, 'utf8').includes('weir-hivemq: started'), READY_TIMEOUT_MS, 'hivemq to start', 100);
      await waitForPort(port, 5_000, s);
    } catch (err) {
      await s.stop(5_000);
      throw new Error(`hivemq: broker on ${port} did not start: ${(err as Error).message}\n--- ${logFile} (tail) ---\n${s.tail(60)}`);
    }
    return s;
  });
  return Object.assign(life, { url: `mqtt://127.0.0.1:${port}`, port });
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

await runAsProgram(
  import.meta.url,
  () => startHivemq(),
  (h) => ({ url: h.url }),
  (h) => `hivemq: ready on ${h.url} in ${h.startupMs} ms (data ${h.dir})`,
);
