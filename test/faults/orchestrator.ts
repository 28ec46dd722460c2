// The test harness as the orchestrator: weir replicas run with a Kubernetes StatefulSet's semantics,
// driven only through the CLI (plain `weir run`) and signals, as a kubelet drives a container.
//
// - Ordinals 0..n-1; pod i's client id is `<name>-<i>` (its pod name), its directory kept across
//   restarts as a PersistentVolume would be (weir keeps nothing there but its config and log).
// - Termination is the kubelet's: SIGTERM, then SIGKILL if the process has not exited within the
//   grace period (terminationGracePeriodSeconds). Every exit is recorded: code, signal, seconds.
// - Scale-down removes the highest ordinal first, one at a time, each only after the previous has
//   exited; scale-up adds the next ordinals, one at a time, each after the previous is ready
//   (/readyz): podManagementPolicy OrderedReady.
// - A rolling update replaces the pods in reverse ordinal order, each started again (same ordinal,
//   same client id) and ready before the next is terminated.
// - Pod deletion: SIGTERM, exit, the same ordinal started again. Node loss: SIGKILL, never back.
// - A full stop (every replica at once, as `kubectl delete` of the set or a cluster shutdown does)
//   and a Deployment-style termination of several pods at the same instant: SIGTERM to all of them
//   in one tick, then the same grace period each.
import type { WeirFiles } from '../harness/weir.js';
import type { Fleet, Member } from './fleet.js';

/** How one pod's process ended. */
export interface Exit {
  readonly ordinal: number;
  readonly code: number | null;
  /** SIGKILL when the grace period ran out (or for a node loss). */
  readonly signal: NodeJS.Signals | null;
  readonly seconds: number;
  readonly how: 'terminated' | 'killed after grace' | 'node lost';
}

export interface StatefulSetOptions {
  /** The set's name: pods and client ids are `<name>-<ordinal>`. */
  readonly name: string;
  /** weir's files for a pod, by its client id. */
  readonly files: (clientId: string) => WeirFiles;
  /** terminationGracePeriodSeconds, in ms (Kubernetes' default is 30 s; the chart sets it above weir's drain). */
  readonly graceMs?: number;
  /** How long a started pod may take to be ready. */
  readonly readyTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

const exited = (m: Member) => m.weir.svc.proc.exitCode !== null || m.weir.svc.proc.signalCode !== null;

export class StatefulSet {
  /** Pods by ordinal, running or not; a lost node's pod stays here, stopped, never started again. */
  private readonly pods = new Map<number, Member>();
  private readonly lost = new Set<number>();
  readonly exits: Exit[] = [];
  private readonly graceMs: number;

  constructor(
    private readonly fleet: Fleet,
    private readonly o: StatefulSetOptions,
  ) {
    this.graceMs = o.graceMs ?? 60_000;
  }

  clientId(ordinal: number): string {
    return `${this.o.name}-${ordinal}`;
  }

  /** Ordinals whose process runs now. */
  get running(): number[] {
    return [...this.pods.entries()]
      .filter(([, m]) => !exited(m))
      .map(([o]) => o)
      .sort((a, b) => a - b);
  }

  /** Ordinals whose node was lost. */
  get lostOrdinals(): number[] {
    return [...this.lost].sort((a, b) => a - b);
  }

  /** Every client id a pod of this set ever had. */
  get clientIds(): string[] {
    return [...this.pods.keys()].sort((a, b) => a - b).map((o) => this.clientId(o));
  }

  pod(ordinal: number): Member {
    const m = this.pods.get(ordinal);
    if (!m) throw new Error(`no pod ${this.clientId(ordinal)}`);
    return m;
  }

  /**
   * Creates the set with `replicas` pods. `parallel`: podManagementPolicy Parallel (all started at
   * once, then all awaited); otherwise OrderedReady.
   */
  async create(replicas: number, parallel = false): Promise<void> {
    const ordinals = Array.from({ length: replicas }, (_, i) => i);
    if (parallel) await Promise.all(ordinals.map((i) => this.startPod(i)));
    else for (const i of ordinals) await this.startPod(i);
  }

  /** Starts ordinal i (first time, or again in its own directory) and waits until it is ready. */
  async startPod(i: number): Promise<void> {
    if (this.lost.has(i)) throw new Error(`${this.clientId(i)}: its node is lost; it does not come back`);
    const m = this.pods.get(i);
    if (m && !exited(m)) return;
    const t0 = Date.now();
    if (m) await this.fleet.restart(m, { timeoutMs: this.o.readyTimeoutMs });
    else this.pods.set(i, await this.fleet.start(this.clientId(i), this.o.files(this.clientId(i)), this.o.readyTimeoutMs));
    this.o.log?.(`${this.clientId(i)} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  /** The kubelet's termination of one pod: SIGTERM, SIGKILL after the grace period. */
  async terminate(i: number): Promise<Exit> {
    return (await this.terminateTogether([i]))[0]!;
  }

  /** SIGTERM to every pod in `ordinals` in the same tick, then each one's grace period. */
  async terminateTogether(ordinals: number[]): Promise<Exit[]> {
    const t0 = Date.now();
    const ms = ordinals.map((i) => this.pod(i));
    for (const m of ms) if (!exited(m)) m.weir.svc.proc.kill('SIGTERM');
    const out = await Promise.all(
      ms.map(async (m, k) => {
        const killed = await this.waitExit(m, this.graceMs);
        const p = m.weir.svc.proc;
        const e: Exit = {
          ordinal: ordinals[k]!,
          code: p.exitCode,
          signal: p.signalCode,
          seconds: (Date.now() - t0) / 1000,
          how: killed ? 'killed after grace' : 'terminated',
        };
        this.exits.push(e);
        this.o.log?.(`${this.clientId(e.ordinal)} ${e.how} after ${e.seconds.toFixed(2)} s (exit ${e.code ?? e.signal})`);
        return e;
      }),
    );
    return out;
  }

  /** Scale to `n`: down from the highest ordinal (each after the previous exited), up in order (each ready). */
  async scale(n: number): Promise<void> {
    const top = () => Math.max(-1, ...[...this.pods.keys()].filter((i) => !this.lost.has(i) && !exited(this.pod(i))));
    while (top() >= n) await this.terminate(top());
    for (let i = 0; i < n; i++) if (!this.lost.has(i)) await this.startPod(i);
  }

  /** A rolling update: from the highest ordinal down, each terminated, started again and ready before the next. */
  async rollingUpdate(between?: (ordinal: number) => Promise<void>): Promise<void> {
    for (const i of [...this.running].reverse()) {
      await this.terminate(i);
      await between?.(i);
      await this.startPod(i);
    }
  }

  /** `kubectl delete pod`: terminated, then the same ordinal started again. */
  async deletePod(i: number): Promise<void> {
    await this.terminate(i);
    await this.startPod(i);
  }

  /** The node under pod i is gone: its process dies at once (SIGKILL) and the pod never comes back. */
  async nodeLoss(i: number): Promise<Exit> {
    const m = this.pod(i);
    const t0 = Date.now();
    await m.weir.kill('SIGKILL');
    this.lost.add(i);
    const e: Exit = { ordinal: i, code: null, signal: 'SIGKILL', seconds: (Date.now() - t0) / 1000, how: 'node lost' };
    this.exits.push(e);
    this.o.log?.(`${this.clientId(i)}: node lost (SIGKILL)`);
    return e;
  }

  /** Every running pod terminated at the same instant. */
  async stopAll(): Promise<Exit[]> {
    return this.terminateTogether(this.running);
  }

  /** Resolves true if the grace period ran out and the process was killed. */
  private async waitExit(m: Member, graceMs: number): Promise<boolean> {
    if (exited(m)) return false;
    const p = m.weir.svc.proc;
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      p.kill('SIGKILL');
    }, graceMs);
    await new Promise((r) => (exited(m) ? r(null) : p.once('exit', r)));
    clearTimeout(timer);
    return killed;
  }
}
