// jq(filter, value[, timeout_ms]): EMQX's jq() through jq-web, jq 1.7 compiled to WebAssembly.
//
// Chosen by measuring the npm builds (Node 20, this 2-core VM, `{t: .temp, d: .dev}` over a
// 60-byte object; docs/benchmarks.md):
//   jq-web 0.6.2        20/20 correctness cases; ready in 17-40 ms; 1.8-3.5 ms a call; stable
//                       over 3,000 calls (RSS 65 MB); synchronous once its module has loaded.
//   jq-wasm 1.0.1       20/20 cases; ready in 22-68 ms; 3.6 ms a call, but only through a
//                       Promise, and "memory access out of bounds" after 312-532 calls (its
//                       callMain leaks stack).
//   @pixiebrix/jq-web   asm.js by default: 81 ms a call.
// Every build runs jq's main() per call, which compiles jq's builtins again: that is the
// milliseconds, and no npm build exports jq_compile/jq_next to cache a compiled filter (EMQX's
// NIF caches it). Through this file, `npm run bench -- rules` case d: 788 jq projections/s
// beside 3.7 M/s in SQL; the first result 70 ms after the rule is compiled.
//
// A wasm call cannot be interrupted on the thread that makes it, so jq runs in a worker thread
// and the rule waits for it synchronously (Atomics.wait on a shared flag, the reply read with
// receiveMessageOnPort): evaluation stays synchronous, and a call past its timeout terminates the
// worker (the next call starts a fresh one). The worker, and jq-web in it, start only when a
// rule that calls jq() is compiled (`prepare`), never for a rule without it, nor at import: this
// file imports only Node built-ins.
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { budgetLeft, checkBudget } from '../compile/budget.js';
import { RuleEvalError } from '../errors.js';
import { LIMITS } from '../limits.js';
import { toJson } from '../values/to-json.js';
import { isBinary, text } from '../values/value-types.js';
import { checkSize, needInt, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

/** The worker: loads jq-web, then answers each request on its port and raises the done flag. */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { flags, port, jqPath } = workerData;
const state = new Int32Array(flags);
let jq;
function raise(slot, value) { Atomics.store(state, slot, value); Atomics.notify(state, slot); }
require(jqPath).then(
  (m) => { jq = m; raise(1, 1); },
  (err) => { port.postMessage({ loadError: String((err && err.message) || err) }); raise(1, 2); },
);
port.on('message', ({ seq, filter, input }) => {
  let reply;
  try {
    reply = { seq, out: jq.raw(input, filter, ['-c']) ?? '' };
  } catch (err) {
    reply = { seq, error: String((err && (err.stderr || err.message)) || err) };
  }
  port.postMessage(reply);
  raise(0, seq);
});
`;

/** Slot 0: the seq of the last answered request; slot 1: 0 loading, 1 ready, 2 failed. */
const DONE = 0;
const READY = 1;

interface Reply {
  seq?: number;
  out?: string;
  error?: string;
  loadError?: string;
}

class JqWorker {
  private readonly worker: Worker | undefined;
  private readonly port: MessagePort;
  private readonly state: Int32Array;
  private seq = 0;
  /** Why jq cannot run here (jq-web missing or failing to load): every call fails with it. */
  private failure: string | undefined;

  constructor() {
    const flags = new SharedArrayBuffer(8);
    this.state = new Int32Array(flags);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.port.unref();
    let jqPath: string;
    try {
      jqPath = createRequire(import.meta.url).resolve('jq-web');
    } catch (err) {
      // Compiling the rule must not throw for this: its messages fail, each with the reason.
      this.failure = `the jq-web package is not installed (${(err as Error).message.split('\n')[0]})`;
      return;
    }
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { flags, port: port2, jqPath }, transferList: [port2] });
    // It does not keep a process alive that is otherwise done (weir eval, weir test).
    this.worker.unref();
  }

  /** Runs one filter; throws RuleEvalError on a jq error or past the deadline. */
  run(filter: string, input: string, timeoutMs: number): string {
    this.awaitReady();
    const seq = ++this.seq;
    this.port.postMessage({ seq, filter, input });
    const deadline = Date.now() + timeoutMs;
    while (Atomics.load(this.state, DONE) !== seq) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.state, DONE, seq - 1, left) === 'timed-out') {
        if (Atomics.load(this.state, DONE) === seq) break;
        throw new JqTimeout(timeoutMs);
      }
    }
    const reply = this.receive();
    if (reply.error !== undefined) throw new RuleEvalError('rule.jq_failed', `jq: ${cleanError(reply.error)}`);
    return reply.out ?? '';
  }

  terminate(): void {
    void this.worker?.terminate();
  }

  /** Loading is not charged to a call's timeout: it happens once per worker, before the call. */
  private awaitReady(): void {
    if (this.failure !== undefined) throw new RuleEvalError('rule.jq_failed', `jq: ${this.failure}`);
    const deadline = Date.now() + LIMITS.jqLoadTimeoutMs;
    while (Atomics.load(this.state, READY) === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new RuleEvalError('rule.jq_failed', `jq: WebAssembly module not loaded within ${LIMITS.jqLoadTimeoutMs} ms`);
      Atomics.wait(this.state, READY, 0, left);
    }
    if (Atomics.load(this.state, READY) === 2) {
      this.failure = `cannot load jq-web: ${this.receive().loadError ?? 'unknown error'}`;
      throw new RuleEvalError('rule.jq_failed', `jq: ${this.failure}`);
    }
  }

  private receive(): Reply {
    const m = receiveMessageOnPort(this.port);
    return (m?.message ?? {}) as Reply;
  }
}

/** jq's stderr without the CLI's noise: its `jq: error:` prefix, shell hints, the error count. */
function cleanError(stderr: string): string {
  return stderr
    .replace(/^jq: error \(at [^)]*\): /, '')
    .replace(/^jq: (error: )?/, '')
    .replace(' (Unix shell quoting issues?)', '')
    .replace(/\njq: \d+ compile errors?$/, '')
    .trim();
}

/** A filter past its timeout: the evaluation budget is spent (rule.limit), as for any step. */
class JqTimeout extends RuleEvalError {
  constructor(ms: number) {
    super('rule.limit', `jq: timed out after ${ms} ms (its worker is replaced)`);
  }
}

let current: JqWorker | undefined;

/** Starts the worker and jq-web in it, so that the first message does not wait for the load. */
export function prepareJq(): void {
  current ??= new JqWorker();
}

/** Whether a rule has started jq's worker in this process (a rule without jq() never does). */
export function jqStarted(): boolean {
  return current !== undefined;
}

/** The JSON text jq reads: a string is JSON already (as in EMQX), anything else is encoded. */
function inputText(value: unknown): string {
  if (isBinary(value)) return text(value);
  return value === undefined ? 'null' : toJson(value);
}

/** EMQX's jq/2 and jq/3: the list of the filter's results, each decoded from jq's JSON output. */
export function jq(filter: unknown, value: unknown, timeout?: unknown): unknown[] {
  const f = needStr('jq', filter);
  const asked = timeout === undefined ? LIMITS.jqTimeoutMs : needInt('jq', timeout);
  if (asked < 0) throw new RuleEvalError('rule.bad_argument', 'jq: the timeout must not be negative');
  // The process waits while jq runs: no call may outlast what is left of the evaluation budget.
  checkBudget('jq');
  const ms = Math.max(0, Math.min(asked, Math.floor(budgetLeft())));
  prepareJq();
  let out: string;
  try {
    out = (current as JqWorker).run(f, inputText(value), ms);
  } catch (err) {
    // A worker stuck in a filter is of no further use; a jq error leaves it fit for the next call.
    if (err instanceof JqTimeout) {
      current?.terminate();
      current = undefined;
    }
    throw err;
  }
  // Bounded as any function's result (a filter such as [range(1e7)] stops here, not in the sink).
  checkSize('jq', out.length);
  const results: unknown[] = [];
  for (const line of out.split('\n')) if (line !== '') results.push(JSON.parse(line));
  return results;
}

export const JQ_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'jq',
    'jq(string, any, int?): array',
    "The results of a jq filter over a value (a string is read as JSON text), as a list; a jq error, or the timeout (the third argument in ms, at most what is left of the 1 s evaluation budget), fails the evaluation. Starts jq's WebAssembly worker when the rule is compiled.",
    jq,
    {
      volatile: true,
      prepare: prepareJq,
      examples: [
        { call: "jq('.', json_decode('{\"b\": 2}'))", result: [{ b: 2 }] },
        { call: "jq('.+1', 5)", result: [6] },
        { call: "jq('.arr[] | . * 10', payload)", result: [10, 20, 30] },
        { call: "jq('.[', '1')", error: true },
      ],
    },
  ),
];
