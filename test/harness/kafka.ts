// A real Apache Kafka broker for the integration tests: one KRaft node in combined mode
// (broker + controller), run from the jars that test/brokers/kafka/fetch.sh resolves from Maven
// Central into .it/kafka/lib, bound to 127.0.0.1 on free ports, with a fresh data directory.
//
//   const kafka = await startKafka({ partitionsDefault: 3 });   // kafka.brokers = ['127.0.0.1:PORT']
//   await kafka.stop(); await kafka.start();                      // same ports, same data
//   await kafka.dispose();                                        // stop and delete the data
//
//   const { brokers } = await sharedKafka();   // WEIR_TEST_KAFKA's broker, or one for this process
//
// Started as a program (`node --import tsx test/harness/kafka.ts`), it starts one broker, prints
// `{"brokers":[...]}` on one line and keeps it until SIGTERM/SIGINT: the test runner can put that
// line in WEIR_TEST_KAFKA for every test file. docs/kafka.md has the measurements and pitfalls.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { fetchJars, jvmWatchdog } from './jvm.js';
import { type BrokerProcess, brokerProcess, runAsProgram, waitWhileRunning } from './broker-process.js';
import { freePort, startService, tempDir, waitForPort } from './process.js';

const execFileP = promisify(execFile);
const { Kafka, logLevel } = kafkajs;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FETCH = join(ROOT, 'test/brokers/kafka/fetch.sh');
const LIB = join(ROOT, '.it/kafka/lib');
/** A fixed cluster id (22 chars of base64url, as `StorageTool random-uuid` prints): one JVM start less. */
const CLUSTER_ID = 'd2Vpci1pdC1rYWZrYS0xAA';
const READY_TIMEOUT_MS = 90_000;

/** stop(): a controlled shutdown; startupMs: from spawning the JVM to a successful admin call. */
export interface KafkaBroker extends BrokerProcess {
  /** Bootstrap servers, `127.0.0.1:<port>`. */
  readonly brokers: string[];
}

export interface StartKafkaOptions {
  /** `num.partitions`: partitions of topics created without a count. Default 1. */
  partitionsDefault?: number;
}

/** Resolves the broker's jars into .it/kafka/lib unless they are there for the current pom. */
export async function ensureKafkaJars(): Promise<string> {
  await fetchJars('kafka', FETCH, ROOT);
  return LIB;
}

function serverProperties(o: { port: number; controllerPort: number; dataDir: string; partitions: number }): string {
  // Java .properties: comments only on their own lines (a `#` after a value is part of the value).
  return [
    'process.roles=broker,controller',
    'node.id=1',
    // Static quorum: no `--standalone` at format time.
    `controller.quorum.voters=1@127.0.0.1:${o.controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${o.port},CONTROLLER://127.0.0.1:${o.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${o.port}`,
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${o.dataDir}`,
    `num.partitions=${o.partitions}`,
    // Topics exist only when a test or the sink (create_topics) makes them.
    'auto.create.topics.enable=false',
    // One node: every internal topic at replication factor 1, and small.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // Two shared cores: few threads.
    'num.network.threads=2',
    'num.io.threads=2',
    'num.recovery.threads.per.data.dir=1',
    'background.threads=2',
    '',
  ].join('\n');
}

const LOG4J2 = [
  'status = warn',
  'appender.out.type = Console',
  'appender.out.name = OUT',
  'appender.out.layout.type = PatternLayout',
  'appender.out.layout.pattern = [%d] %p %m (%c)%n',
  'rootLogger.level = warn',
  'rootLogger.appenderRef.out.ref = OUT',
  // Keeps "Kafka Server started" and the shutdown lines in the log.
  'logger.raft.name = kafka.server.KafkaRaftServer',
  'logger.raft.level = info',
  '',
].join('\n');

function jvmArgs(dir: string): string[] {
  return [
    '-Xms128m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-Djava.awt.headless=true',
    '-Djava.net.preferIPv4Stack=true',
    `-Dlog4j2.configurationFile=${join(dir, 'log4j2.properties')}`,
    `-Dkafka.logs.dir=${join(dir, 'logs')}`,
    // Extra JVM options, e.g. a bigger heap for a benchmark (later options win).
    ...(process.env.WEIR_KAFKA_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean),
    '-cp',
    `${LIB}/*`,
  ];
}

/** True when one admin call (describeCluster) succeeds against the broker. */
async function adminReady(brokers: string[]): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'weir-test-harness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const c = await admin.describeCluster();
    return c.brokers.length > 0 && c.controller !== null;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

export async function startKafka(opts: StartKafkaOptions = {}): Promise<KafkaBroker> {
  await ensureKafkaJars();
  const dir = tempDir('kafka');
  const dataDir = join(dir, 'data');
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const port = await freePort();
  const controllerPort = await freePort();
  const brokers = [`127.0.0.1:${port}`];
  const props = join(dir, 'server.properties');
  writeFileSync(props, serverProperties({ port, controllerPort, dataDir, partitions: opts.partitionsDefault ?? 1 }));
  writeFileSync(join(dir, 'log4j2.properties'), LOG4J2);
  const logFile = join(dir, 'kafka.log');

  try {
    await execFileP('java', [...jvmArgs(dir), 'kafka.tools.StorageTool', 'format', '-t', CLUSTER_ID, '-c', props], {
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`kafka: formatting the storage failed: ${e.message}\n${(e.stdout ?? '').slice(-4000)}${(e.stderr ?? '').slice(-4000)}`);
  }

  const life = await brokerProcess('kafka', dir, 20_000, async () => {
    const s = startService('java', [...jvmArgs(dir), 'kafka.Kafka', props], logFile);
    // The JVM must never keep the test process alive, nor outlive it.
    s.unref();
    if (s.proc.pid !== undefined) jvmWatchdog(s.proc.pid, dir);
    try {
      await waitForPort(port, READY_TIMEOUT_MS, s);
      await waitWhileRunning(s, () => adminReady(brokers), READY_TIMEOUT_MS, 'kafka describeCluster');
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error('kafka exited');
    } catch (err) {
      await s.stop(5_000);
      throw new Error(`kafka: broker on ${brokers[0]} did not become ready: ${(err as Error).message}\n--- ${logFile} (tail) ---\n${s.tail(60)}`);
    }
    return s;
  });
  return Object.assign(life, { brokers });
}

let shared: Promise<{ brokers: string[] }> | undefined;

/**
 * The broker every test file of a run shares: the one described by WEIR_TEST_KAFKA
 * (`{"brokers":["127.0.0.1:9092"]}`, set by the test runner), or else one started for this
 * process and disposed when it exits. Tests that stop or restart a broker use startKafka().
 */
export function sharedKafka(): Promise<{ brokers: string[] }> {
  shared ??= (async () => {
    const env = process.env.WEIR_TEST_KAFKA;
    if (env) {
      const parsed = JSON.parse(env) as { brokers?: unknown };
      if (!Array.isArray(parsed.brokers) || parsed.brokers.length === 0 || !parsed.brokers.every((b) => typeof b === 'string')) {
        throw new Error(`WEIR_TEST_KAFKA must be {"brokers":["host:port",...]}, got ${env}`);
      }
      return { brokers: parsed.brokers as string[] };
    }
    // Disposed by the watchdog once this process has exited ('exit' handlers cannot wait).
    const k = await startKafka();
    return { brokers: k.brokers };
  })();
  return shared;
}

// As a program: one broker for a whole test run (test/run.mjs puts the printed line in WEIR_TEST_KAFKA).
await runAsProgram(
  import.meta.url,
  () => startKafka(),
  (k) => ({ brokers: k.brokers }),
  (k) => `kafka: ready on ${k.brokers.join(',')} in ${k.startupMs} ms (data ${k.dir})`,
);
