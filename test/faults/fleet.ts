// The weir processes of one scenario: each a member of the scenario's share group with its own
// client id and directory, started, killed and restarted as a black box (its own process, its
// /metrics and its log), with the peak resident memory of every process sampled from
// /proc/<pid>/status every 500 ms. dispose() kills what runs and ends the members' broker
// sessions, so no later scenario shares a queue with this one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirFiles, type WeirProcess } from '../harness/weir.js';
import { endSessions } from '../e2e/fixtures.js';

export interface Member {
  readonly clientId: string;
  readonly files: WeirFiles;
  /** The running (or last) process; a restart replaces it, in the same directory. */
  weir: WeirProcess;
  restarts: number;
}

/** VmRSS of a process in kB, or 0 once it is gone. */
function rssKb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const alive = (w: WeirProcess) => w.svc.proc.exitCode === null && w.svc.proc.signalCode === null;

export class Fleet {
  private readonly members: Member[] = [];
  private peakKb = 0;
  private readonly sampler = setInterval(() => this.sample(), 500);

  constructor(
    private readonly mqttUrl: string,
    private readonly connections: number,
  ) {}

  /** Starts a member and waits until it is ready (broker and sinks). */
  async start(clientId: string, files: WeirFiles, readyTimeoutMs?: number): Promise<Member> {
    const weir = await startWeir(files);
    const m: Member = { clientId, files, weir, restarts: 0 };
    this.members.push(m);
    this.sample();
    await this.ready(m, readyTimeoutMs);
    return m;
  }

  member(i: number): Member {
    const m = this.members[i];
    if (!m) throw new Error(`no member ${i}`);
    return m;
  }

  get running(): WeirProcess[] {
    return this.members.map((m) => m.weir).filter(alive);
  }

  /** Every directory a member ran in (its config, log and dead-letter fallback file). */
  get dirs(): string[] {
    return [...new Set(this.members.map((m) => m.weir.dir))];
  }

  async ready(m: Member, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        if (!alive(m.weir)) throw new Error(`weir ${m.clientId} exited:\n${m.weir.svc.tail()}`);
        return m.weir.ready();
      },
      timeoutMs,
      `weir ${m.clientId} ready`,
    );
  }

  /** Signals the member's process and waits for it to exit; resolves with its exit code. */
  async kill(m: Member, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    this.sample();
    if (signal === 'SIGTERM') return m.weir.stop();
    await m.weir.kill(signal);
    return m.weir.svc.proc.exitCode;
  }

  /** Starts the member again in its directory (same client id: the broker kept its session). */
  async restart(m: Member, opts: { waitReady?: boolean; timeoutMs?: number } = {}): Promise<void> {
    m.weir = await startWeir(m.files, { dir: m.weir.dir });
    m.restarts++;
    this.sample();
    if (opts.waitReady ?? true) await this.ready(m, opts.timeoutMs);
  }

  /** A metric summed over the running processes (unreachable ones count as `absent`). */
  async sum(name: string, absent = Number.NaN): Promise<number> {
    let total = 0;
    for (const w of this.running) total += await w.metric(name).catch(() => absent);
    return total;
  }

  metricsUrls(): string[] {
    return this.running.map((w) => `http://127.0.0.1:${w.httpPort}/metrics`);
  }

  /** Lines of every member's logs (the current process's directory keeps all of its runs). */
  logLines(match: string): string[] {
    return this.members.flatMap((m) =>
      m.weir
        .log()
        .split('\n')
        .filter((l) => l.includes(match)),
    );
  }

  fallbackFiles(): string[] {
    return this.dirs.map((d) => join(d, 'weir-dead-letter-fallback.jsonl'));
  }

  get peakRssMb(): number {
    return Math.round(this.peakKb / 1024);
  }

  private sample(): void {
    for (const w of this.running) {
      const pid = w.svc.proc.pid;
      if (pid !== undefined) this.peakKb = Math.max(this.peakKb, rssKb(pid));
    }
  }

  async dispose(): Promise<void> {
    clearInterval(this.sampler);
    for (const w of this.running) await w.kill();
    for (const m of this.members) await endSessions(this.mqttUrl, m.clientId, this.connections).catch(() => undefined);
  }
}
