// CPU placement of the end-to-end benchmarks' processes (interleave.ts has the method).
//
// This machine has 2 cores; unpinned, the publisher, Mosquitto, the sink's server
// and weir all compete, and the ratio to the ceiling says more about the scheduler than about
// weir. So, like the seeds' reports (load generators on their own machines), the load side —
// publisher and Mosquitto — gets core 0, and the measured side — weir, the sink's server and the
// ceiling's counting subscriber — gets core 1, in both the ceiling run and the weir runs. The
// ratio then says whether weir and its sink, on one core, keep up with what one core of broker
// and publisher can deliver. BENCH_PIN=0 turns placement off (it is off on a 1-core machine).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

/** Core lists for `taskset -c`, or undefined when placement is off. */
export const PLACEMENT: { load: string; measured: string } | undefined =
  process.env.BENCH_PIN !== '0' && cpus().length >= 2 ? { load: '0', measured: cpus().length === 2 ? '1' : `1-${cpus().length - 1}` } : undefined;

/** Sets the CPU affinity of every thread of `pid`. */
function pin(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/**
 * Puts this process on the measured side, so everything it starts from now on (sink servers,
 * weir, the counting subscriber) inherits that placement. Call first.
 */
export function placeSelf(): void {
  if (PLACEMENT) pin(process.pid, PLACEMENT.measured);
}

/** The process listening on a loopback TCP port. */
export function listenerPid(port: number): number {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`no process found listening on port ${port}:\n${out}`);
  return Number(pid);
}

/** Moves the process listening on a loopback TCP port (Mosquitto) to the load side; returns its pid. */
export function placeLoadListener(port: number): number {
  const pid = listenerPid(port);
  if (PLACEMENT) pin(pid, PLACEMENT.load);
  return pid;
}

/** The placement recorded in every result. */
export function placement(): string {
  return PLACEMENT
    ? `publisher and Mosquitto on cpu ${PLACEMENT.load}; weir, the sink's server and the counting subscriber on cpu ${PLACEMENT.measured}`
    : 'none (BENCH_PIN=0 or one core)';
}
