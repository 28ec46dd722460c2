// Sends rule outputs to an HTTP endpoint. One write() sends each item as a request of its own
// (format: message) or the items of one URL and headers as one request (json_array, json_lines),
// at most max_in_flight_requests at once over a keep-alive pool (client.ts), and resolves when
// every response is in:
// - 2xx: written; the core acks the source messages.
// - 408, 429, 5xx, a timeout or a network error: retried by the core with backoff; a Retry-After
//   (429, 503) holds every request to that origin until it has passed.
// - 401, 403, 407: weir's credentials are refused for every message alike: thrown as fatal, so the
//   core retries slowly and reports, rather than dead-letter everything.
// - any other status (4xx, and 3xx: redirects are not followed): refused. A batched request is
//   split in halves until the refused messages stand alone; each is dead-lettered with the status
//   and the start of the response body.
// At least once: a request whose response was lost is sent again.
import net from 'node:net';
import { WeirError } from '../../errors.js';
import { resultOf } from '../item-results.js';
import { ALL_WRITTEN, type BoundAction, type ErrorClass, type Sink, type SinkDeps, type WriteResult } from '../types.js';
import { bindHttpAction, type HttpItem } from './action.js';
import { classifyHttpError } from './classify.js';
import { Pool, redact, retryAfterMs, type Response } from './client.js';
import { HttpError } from './errors.js';
import { lintHttpConfig, type HttpAction, type HttpConfig } from './spec.js';

type Outcome = { ok: true } | { ok: false; error: Error };

export class HttpSink implements Sink<HttpAction, HttpItem> {
  private readonly pool: Pool;
  private closed = false;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  /** Per origin: until when its server asked to be left alone (Retry-After). */
  private readonly holds = new Map<string, number>();
  /** Why the last request failed for want of the server (cleared by a response that is not a 5xx): the probe's answer. */
  private down: Error | undefined;

  constructor(
    private readonly cfg: HttpConfig,
    private readonly deps: SinkDeps,
  ) {
    const problems = lintHttpConfig(cfg);
    // The loader reports these at their lines first; this guards a sink created from settings it never saw.
    if (problems.length > 0)
      throw new WeirError('config.sink.http', `sinks.${deps.name}: ${problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
    this.pool = new Pool(cfg);
  }

  bind(action: HttpAction, _ruleId: string): BoundAction<HttpItem> {
    return bindHttpAction(action, this.cfg);
  }

  /** Nothing to open: the pool connects on the first requests. */
  async connect(_signal: AbortSignal): Promise<void> {}

  async write(items: HttpItem[], signal: AbortSignal): Promise<WriteResult> {
    if (items.length === 0) return ALL_WRITTEN;
    if (this.closed) throw new HttpError('sink.http.closed', `sink ${this.deps.name} is closed`);
    if (signal.aborted) throw new HttpError('sink.http.aborted', 'write aborted: shutting down');
    const outcomes: Outcome[] = new Array(items.length);
    await Promise.all(groups(items).map((g) => this.sendGroup(items, g, outcomes, signal)));
    // Credentials refused (fatal) are thrown: the whole batch again, later, never a dead letter.
    return resultOf(
      outcomes.map((o) => (o.ok ? undefined : o.error)),
      (err) => this.classify(err),
    );
  }

  async probe(_signal: AbortSignal): Promise<void> {
    if (this.down) throw this.down;
    // No request of weir's own (a server may count or refuse it): a TCP connect to the sink's URL.
    const u = new URL(this.cfg.url);
    await new Promise<void>((resolve, reject) => {
      const sock = net.connect({ host: u.hostname, port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80), timeout: this.cfg.timeout_ms });
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('timeout', () => sock.destroy(new HttpError('sink.http.timeout', `no TCP connection to ${u.host} within timeout_ms`)));
      sock.once('error', reject);
    });
  }

  classify(err: unknown): ErrorClass {
    return classifyHttpError(err);
  }

  fatalKind(err: unknown): string {
    return err instanceof HttpError && err.code === 'sink.http.unauthorized' ? 'credentials refused by the server' : 'fatal error';
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pool.close();
  }

  /** Sends the items at `indexes` as one request; a refused batch is split until the refused items stand alone. */
  private async sendGroup(items: HttpItem[], indexes: number[], outcomes: Outcome[], signal: AbortSignal): Promise<void> {
    const first = items[indexes[0]!]!;
    const all = (o: Outcome) => {
      for (const i of indexes) outcomes[i] = o;
    };
    let res: Response;
    try {
      res = await this.request(first, bodyOf(items, indexes), signal);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (this.classify(error) === 'retry') this.down = error;
      return all({ ok: false, error });
    }
    const { status } = res;
    if (status < 500) this.down = undefined;
    if (status >= 200 && status < 300) return all({ ok: true });
    const what = `${first.method} ${redact(new URL(first.url))}: HTTP ${status} ${res.statusText}${res.excerpt ? `: ${res.excerpt}` : ''}`;
    if (status === 401 || status === 403 || status === 407) return all({ ok: false, error: httpError('sink.http.unauthorized', what, status) });
    if (status === 408 || status === 429 || status >= 500) {
      const wait = retryAfterMs(res.retryAfter);
      if (wait !== undefined) this.hold(first.url, Math.min(wait, this.cfg.max_retry_after_ms));
      const error = httpError('sink.http.unavailable', what, status);
      error.retryAfterMs = wait;
      if (status >= 500) this.down = error;
      return all({ ok: false, error });
    }
    if (indexes.length > 1) {
      const mid = indexes.length >> 1;
      await this.sendGroup(items, indexes.slice(0, mid), outcomes, signal);
      await this.sendGroup(items, indexes.slice(mid), outcomes, signal);
      return;
    }
    all({ ok: false, error: httpError('sink.http.rejected', what, status) });
  }

  /** One request, once a slot under max_in_flight_requests is free and the origin's Retry-After has passed. */
  private async request(item: HttpItem, body: Buffer, signal: AbortSignal): Promise<Response> {
    const origin = new URL(item.url).origin;
    const until = this.holds.get(origin);
    if (until !== undefined) {
      const wait = until - Date.now();
      if (wait > 0) await sleep(wait, signal);
      else this.holds.delete(origin);
    }
    if (this.inFlight >= this.cfg.max_in_flight_requests) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    try {
      if (signal.aborted) throw new HttpError('sink.http.aborted', 'request abandoned: shutting down');
      return await this.pool.send(item.url, item.method, { ...this.cfg.headers, ...item.headers }, body, signal);
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  private hold(url: string, ms: number): void {
    const origin = new URL(url).origin;
    const until = Date.now() + ms;
    if ((this.holds.get(origin) ?? 0) < until) this.holds.set(origin, until);
  }
}

function httpError(code: 'sink.http.unauthorized' | 'sink.http.unavailable' | 'sink.http.rejected', message: string, status: number): HttpError {
  const e = new HttpError(code, message);
  e.status = status;
  return e;
}

/** The items of one request: each alone (message), or those with one URL, method and headers (batched formats). */
function groups(items: HttpItem[]): number[][] {
  const out = new Map<string, number[]>();
  const singles: number[][] = [];
  for (const [i, it] of items.entries()) {
    if (it.format === 'message') {
      singles.push([i]);
      continue;
    }
    const key = `${it.format} ${it.method} ${it.url} ${JSON.stringify(it.headers)}`;
    let g = out.get(key);
    if (!g) out.set(key, (g = []));
    g.push(i);
  }
  return [...singles, ...out.values()];
}

const NEWLINE = Buffer.from('\n');
const COMMA = Buffer.from(',');

/** The body of one request: the item's own, a JSON array of the items' bodies, or one per line. */
function bodyOf(items: HttpItem[], indexes: number[]): Buffer {
  const first = items[indexes[0]!]!;
  if (first.format === 'message') return first.body;
  const parts: Buffer[] = [];
  if (first.format === 'json_array') parts.push(Buffer.from('['));
  for (const [k, i] of indexes.entries()) {
    if (k > 0 && first.format === 'json_array') parts.push(COMMA);
    parts.push(items[i]!.body);
    if (first.format === 'json_lines') parts.push(NEWLINE);
  }
  if (first.format === 'json_array') parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
