// Shared plumbing for the service harness: free loopback ports, child processes whose output is
// kept in a log file (shown when something fails), and waiting for a port to accept connections.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the service to bind). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `weir-${prefix}-`));
}

export interface Service {
  readonly proc: ChildProcess;
  readonly logFile: string;
  /** The tail of the service's output, for error messages. */
  tail(lines?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL; resolves when the process has exited. */
  kill(): Promise<void>;
  /** Lets this process exit while the service runs (its 'exit' handler then stops the service). */
  unref(): void;
}

/** Starts a long-running service; its stdout and stderr go to `logFile`. */
export function startService(cmd: string, args: string[], logFile: string, opts: SpawnOptions = {}): Service {
  const out = createWriteStream(logFile, { flags: 'a' });
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    logFile,
    tail(lines = 40) {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    unref() {
      proc.unref();
      (proc.stdout as unknown as { unref?: () => void } | null)?.unref?.();
      (proc.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    },
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      // The child may be unref'd: a timer keeps this process alive until its exit is seen.
      const keep = setInterval(() => {}, 1000);
      proc.kill('SIGKILL');
      await exited;
      clearInterval(keep);
    },
  };
}

/** Resolves once host:port accepts a TCP connection; rejects after `timeoutMs` or if `svc` exits. */
export async function waitForPort(port: number, timeoutMs: number, svc?: Service, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (svc && (svc.proc.exitCode !== null || svc.proc.signalCode !== null)) {
      throw new Error(`service exited before listening on ${port}:\n${svc.tail()}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => {
        s.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${host}:${port}\n${svc?.tail() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs: number, what: string, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
