// Who may do what through the console's API (DESIGN.md 13). weir's HTTP port listens on all
// interfaces by default, so the console must not widen what an anonymous client can do or see:
// payloads (dead letters, traces) and Try it, and writes (replay, purge), are offered only when
// the client proved who it is (http.basic_auth, or a client certificate under
// http.tls.client_ca_file) or the port is bound to loopback. Everything else (counters, states)
// is what /metrics, /rules and /sinks already show.
//
// A state-changing request is a POST that a cross-site page cannot make: a form cannot send JSON
// or a custom header, and a cross-origin fetch that does is preflighted, which weir never
// answers with permission; a browser's Origin, when sent, must name the Host it was sent to.
import type http from 'node:http';
import { isIP } from 'node:net';
import type { WeirFileConfig } from '../../../config/schema.js';
import type { Access } from './api.js';

/** The largest request body the API reads; a larger one is answered 413. */
export const MAX_BODY_BYTES = 256 * 1024;

type HttpConfig = WeirFileConfig['http'];

/** What a client of this server may do; `authed` is whether it passed basic auth (true when none is set). */
export function accessFor(cfg: HttpConfig, authed: boolean): Access {
  if (cfg.basic_auth && authed) return { payloads: true, writes: true, reason: '' };
  if (cfg.tls?.client_ca_file) return { payloads: true, writes: true, reason: '' };
  if (isLoopback(cfg.host)) return { payloads: true, writes: true, reason: '' };
  return {
    payloads: false,
    writes: false,
    reason: `payloads, Try it, traces, replay and purge need http.basic_auth (or http.tls.client_ca_file), or http.host bound to loopback (127.0.0.1); weir listens on ${cfg.host} without credentials`,
  };
}

/** Whether the address the server is bound to is reachable only from this host. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const kind = isIP(host);
  if (kind === 4) return host.startsWith('127.');
  if (kind === 6) return host === '::1' || /^::ffff:127\./i.test(host);
  return false;
}

/** Why a POST is refused as possibly cross-site, or undefined when it is the console's own. */
export function csrfProblem(req: http.IncomingMessage): string | undefined {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return 'a POST to the API must have content-type: application/json';
  if (req.headers['x-weir-console'] !== '1') return 'a POST to the API must carry the header x-weir-console: 1';
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = origin === 'null' ? undefined : new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host === undefined || host.toLowerCase() !== (req.headers.host ?? '').toLowerCase())
      return `cross-origin request refused: Origin ${origin} is not this server (${req.headers.host ?? 'no Host'})`;
  }
  return undefined;
}

/** The request's body, or 'too large' past MAX_BODY_BYTES (the rest is not read). */
export function readBody(req: http.IncomingMessage): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) return resolve('too large');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
