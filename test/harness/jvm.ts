// What the JVM brokers of the harness (Kafka, Pulsar, HiveMQ) share: their jars resolved from
// Maven Central by a fetch.sh beside their pom, and a watchdog that outlives the test process.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs a broker's fetch.sh (it returns at once when the jars for its pom are there already);
 * on failure, an error with the script's output.
 */
export async function fetchJars(name: string, script: string, cwd: string, timeoutMs = 9 * 60_000): Promise<void> {
  try {
    await promisify(execFile)('bash', [script], { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${name}: fetching the broker jars failed (bash ${script}):\n${e.stderr ?? ''}${e.stdout ?? ''}\n${e.message}`);
  }
}

/**
 * A detached shell that outlives this process: if the test process dies (even by SIGKILL) while
 * the JVM runs, it stops the JVM (TERM, then KILL after 20 s) and deletes the broker's directory.
 * A JVM that stops while this process lives (a normal stop()) ends it.
 */
export function jvmWatchdog(javaPid: number, dir: string): void {
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${javaPid} 2>/dev/null; do sleep 1; done`,
    `kill -0 ${process.pid} 2>/dev/null && exit 0`,
    `kill -TERM ${javaPid} 2>/dev/null`,
    `for i in $(seq 1 40); do kill -0 ${javaPid} 2>/dev/null || break; sleep 0.5; done`,
    `kill -KILL ${javaPid} 2>/dev/null`,
    `rm -rf '${dir}'`,
  ].join('\n');
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}
