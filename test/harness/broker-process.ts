// What the harness's broker processes (Mosquitto, HiveMQ, Kafka, Pulsar) share: a life of
// start → stop or kill → start again on the same ports and data → dispose, the time a start took,
// a wait for readiness that gives up when the process has exited; and every service harness's
// program mode (PostgreSQL's too: one service for a whole test run, test/run.mjs). How each
// starts and when it is ready stays in its own file.
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Service, waitFor } from './process.js';

export interface BrokerProcess {
  /** SIGTERM: the broker stops gracefully (and saves what it persists); its directory stays. */
  stop(): Promise<void>;
  /** Starts it again after stop() or kill(), on the same ports and directory; resolves when ready. */
  start(): Promise<void>;
  /** SIGKILL: what the broker had not written to disk is gone. */
  kill(): Promise<void>;
  /** Stops the broker and deletes its directory (kept when WEIR_KEEP_BROKER_DIRS is set). */
  dispose(): Promise<void>;
  /** Lets the calling process exit while the broker runs. */
  unref(): void;
  /** How long the last start took, from spawning the process to ready. */
  readonly startupMs: number;
  /** Its config, data and log directory. */
  readonly dir: string;
}

/**
 * A broker's life around `launch`, which starts its process once and resolves when it is ready
 * (or stops it and throws, with its log's tail). The first launch happens here; when it fails,
 * the directory is deleted and the error thrown. `stopGraceMs`: SIGTERM to SIGKILL.
 */
export async function brokerProcess(name: string, dir: string, stopGraceMs: number, launch: () => Promise<Service>): Promise<BrokerProcess> {
  let svc: Service | undefined;
  let startupMs = 0;
  let disposed = false;
  const run = async (): Promise<void> => {
    const t0 = Date.now();
    svc = await launch();
    startupMs = Date.now() - t0;
  };
  const halt = async (signal: 'SIGTERM' | 'SIGKILL'): Promise<void> => {
    const s = svc;
    svc = undefined;
    if (s) await (signal === 'SIGTERM' ? s.stop(stopGraceMs) : s.kill());
  };
  const removeDir = () => {
    if (!process.env.WEIR_KEEP_BROKER_DIRS) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run();
  } catch (err) {
    disposed = true;
    removeDir();
    throw err;
  }
  return {
    dir,
    get startupMs() {
      return startupMs;
    },
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    async start() {
      if (disposed) throw new Error(`${name}: start() after dispose()`);
      if (!svc) await run();
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await halt('SIGTERM');
      removeDir();
    },
    unref() {
      svc?.unref();
    },
  };
}

/** Polls `ready` as waitFor does, but fails at once when the process `s` has exited. */
export function waitWhileRunning<T>(s: Service, ready: () => Promise<T> | T, timeoutMs: number, what: string, everyMs = 250): Promise<T> {
  return waitFor(
    () => {
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error('exited');
      return ready();
    },
    timeoutMs,
    what,
    everyMs,
  );
}

/**
 * A harness run as a program (`node --import tsx test/harness/<name>.ts`, as test/run.mjs does):
 * when `moduleUrl` is the program, starts one service, prints `line(service)` as one JSON line
 * (the runner passes it to the tests in WEIR_TEST_<NAME>), `note` on stderr, and keeps the service
 * until SIGTERM or SIGINT, then disposes of it.
 */
export async function runAsProgram<S extends { dispose(): Promise<void> }>(
  moduleUrl: string,
  start: () => Promise<S>,
  line: (s: S) => object,
  note?: (s: S) => string | undefined,
): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(resolve(process.argv[1])).href) return;
  const s = await start();
  process.stdout.write(`${JSON.stringify(line(s))}\n`);
  const n = note?.(s);
  if (n) process.stderr.write(`${n}\n`);
  const keep = setInterval(() => {}, 1 << 30);
  const bye = (): void => {
    clearInterval(keep);
    void s.dispose().then(() => process.exit(0));
  };
  process.once('SIGTERM', bye);
  process.once('SIGINT', bye);
}
