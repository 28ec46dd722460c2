// Sends one request over a keep-alive pool and says how it ended. node:http(s) with an Agent, not
// fetch: Node's fetch is undici inside, and without the undici package (not a dependency) fetch
// takes no Agent of ours, so neither a CA file, a client certificate nor a bound on connections
// could be set; http.Agent does all three, and keeps connections alive between requests.
// The pool is bounded by max_connections per host; requests in flight by max_in_flight_requests
// (a queue of waiting sends in sink.ts), so a slow server holds at most that many.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type tls from 'node:tls';
import { HttpError } from './errors.js';
import type { HttpConfig } from './spec.js';

/** How much of a response body a dead letter or a log line shows. */
export const EXCERPT_BYTES = 300;

export interface Response {
  readonly status: number;
  readonly statusText: string;
  /** The first EXCERPT_BYTES of the body, as text. */
  readonly excerpt: string;
  readonly retryAfter: string | undefined;
}

export class Pool {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly cfg: HttpConfig) {
    const common = { keepAlive: true, maxSockets: cfg.max_connections, maxFreeSockets: cfg.max_connections, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent(common);
    this.httpsAgent = new https.Agent({ ...common, ...tlsOptions(cfg) });
  }

  /** Sends one request; resolves with the response (any status), rejects on a network error or the timeout. */
  send(url: string, method: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal): Promise<Response> {
    return new Promise((resolve, reject) => {
      const u = new URL(url);
      const secure = u.protocol === 'https:';
      const req = (secure ? https : http).request(
        u,
        { method, headers: { ...headers, 'content-length': String(body.length) }, agent: secure ? this.httpsAgent : this.httpAgent, signal },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (c: Buffer) => {
            if (kept < EXCERPT_BYTES) {
              chunks.push(c);
              kept += c.length;
            }
          });
          res.on('end', () => {
            clearTimeout(timer);
            const retryAfter = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
              retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            });
          });
          res.on('error', reject);
        },
      );
      const timer = setTimeout(
        () => req.destroy(new HttpError('sink.http.timeout', `${method} ${redact(u)}: no complete response within timeout_ms (${this.cfg.timeout_ms} ms)`)),
        this.cfg.timeout_ms,
      );
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** The TLS options of the sink's https:// connections, from its tls keys (the pool's, and verify's). */
export function tlsOptions(cfg: HttpConfig): Pick<tls.ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'> {
  const t = cfg.tls;
  return {
    ca: t?.ca_file ? readFileSync(t.ca_file) : undefined,
    cert: t?.cert_file ? readFileSync(t.cert_file) : undefined,
    key: t?.key_file ? readFileSync(t.key_file) : undefined,
    rejectUnauthorized: t?.reject_unauthorized ?? true,
    servername: t?.servername,
  };
}

/** A URL as logs and dead letters show it: without its password. */
export function redact(u: URL): string {
  if (!u.password) return u.toString();
  const c = new URL(u);
  c.password = '***';
  return c.toString();
}

/** Retry-After (seconds, or an HTTP date) in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
