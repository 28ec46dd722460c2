// CPU and memory of processes and cores, read from /proc: what the benchmarks record beside each rate.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds spread over `n` messages, in µs per message to 0.1. */
export const usPerMsg = (cpuMs: number, n: number): number => Math.round((cpuMs * 10_000) / n) / 10;

/** Fields of /proc/<pid>/stat after the command name: [ppid at 1, utime 11, stime 12, cutime 13, cstime 14]. */
function statFields(pid: string | number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** A process's resident memory now, in MB, from /proc. */
export function rssMb(pid: number): number {
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
}

/** CPU time (user + system) and peak RSS of a process, from /proc. */
export function procStats(pid: number): { cpuMs: number; rssPeakMb: number } {
  const fields = statFields(pid);
  if (!fields) throw new Error(`process ${pid} is gone`);
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100/s)
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs: ticks * 10, rssPeakMb: Math.round(Number(hwm?.[1] ?? 0) / 1024) };
}

/**
 * CPU time of a server and every process under it (PostgreSQL's backends; a JVM is one process):
 * the live ones' own time plus what the root collected from children that ended.
 */
export function treeCpuMs(root: number): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (!f) continue;
    const ppid = Number(f[1]);
    let l = children.get(ppid);
    if (!l) children.set(ppid, (l = []));
    l.push(Number(d));
  }
  let ticks = 0;
  const rootFields = statFields(root);
  if (rootFields) ticks += Number(rootFields[13]) + Number(rootFields[14]);
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const f = statFields(pid);
    if (f) ticks += Number(f[11]) + Number(f[12]);
    stack.push(...(children.get(pid) ?? []));
  }
  return ticks * 10;
}

/** Jiffies from /proc/stat of the whole machine (first) and of each core: total, idle (+iowait), steal. */
function cpuTicks(): Array<{ total: number; idle: number; steal: number }> {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('cpu'))
    .map((l) => {
      const f = l.trim().split(/\s+/).slice(1, 9).map(Number);
      return { total: f.reduce((a, b) => a + b, 0), idle: f[3]! + f[4]!, steal: f[7] ?? 0 };
    });
}

/**
 * CPU over a stretch of a run: how busy each core was, the hypervisor's steal, and Mosquitto's
 * CPU per message — the load side's figures, read the same way in ceiling and weir runs.
 */
export class Meter {
  private readonly ticks = cpuTicks();
  private readonly brokerMs: number;

  constructor(private readonly brokerPid: number) {
    this.brokerMs = procStats(brokerPid).cpuMs;
  }

  read(messages: number): { core_busy_pct: number[]; steal_pct: number; broker_cpu_us_per_msg: number } {
    const now = cpuTicks();
    const d = now.map((t, i) => ({
      total: Math.max(1, t.total - this.ticks[i]!.total),
      idle: t.idle - this.ticks[i]!.idle,
      steal: t.steal - this.ticks[i]!.steal,
    }));
    return {
      core_busy_pct: d.slice(1).map((c) => Math.round(((c.total - c.idle - c.steal) / c.total) * 100)),
      steal_pct: Math.round((d[0]!.steal / d[0]!.total) * 1000) / 10,
      broker_cpu_us_per_msg: usPerMsg(procStats(this.brokerPid).cpuMs - this.brokerMs, messages),
    };
  }
}
