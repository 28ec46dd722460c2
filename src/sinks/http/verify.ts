// What `weir check --connect` (and `weir run` at start) asks of an http sink: that each server its
// actions send to can be connected to. For the sink's url and every action url whose scheme, host
// and port are fixed (no ${…} before the path), it opens a TCP connection — for https://, with the
// TLS handshake under the sink's own tls keys (ca_file, client certificate, servername,
// reject_unauthorized), so an untrusted certificate or a wrong name is found — and closes it.
//
// It sends NO HTTP request, not even a HEAD or an OPTIONS: a webhook may act on any request it gets
// (count it, store it, trigger something), and a check must not. So it cannot know whether the
// path exists, the method is allowed or the credentials in the headers are accepted: the first
// write tells (401/403/407 are reported as credentials refused, sink.http.unauthorized).
//
// - no connection (refused, DNS, unreachable, no answer within timeout_ms): rejects, naming
//   host:port; `weir check --connect` prints it as the sink it cannot connect to (exit 3);
// - the TCP connection is made but TLS fails (a certificate that does not verify, a name it does
//   not hold, no TLS on that port): a problem at the url, not "unreachable": the server is there,
//   the sink's tls settings (or the server's certificate) are what to fix, and every write would
//   fail the same way.
import net from 'node:net';
import tls from 'node:tls';
import { isTlsFailure } from '../node-errors.js';
import type { ActionToVerify, VerifyOptions, VerifyProblem } from '../types.js';
import { tlsOptions } from './client.js';
import type { HttpAction, HttpConfig } from './spec.js';

/** One server to connect to, and where its url is written (for the problem's line). */
interface Origin {
  readonly url: URL;
  readonly at: string;
}

/** The origin of a url template, when its scheme, host and port hold no ${…}; else undefined. */
export function fixedOrigin(template: string): URL | undefined {
  const m = /^(https?:\/\/[^/?#]*)/i.exec(template);
  if (!m || m[1]!.includes('${')) return undefined;
  try {
    return new URL(m[1]!);
  } catch {
    return undefined;
  }
}

export async function verifyHttp(cfg: HttpConfig, actions: readonly ActionToVerify[], opts: VerifyOptions, signal: AbortSignal): Promise<VerifyProblem[]> {
  const origins = new Map<string, Origin>();
  const add = (template: string, at: string) => {
    const url = fixedOrigin(template);
    if (url && !origins.has(url.origin)) origins.set(url.origin, { url, at });
  };
  // The sink's url first: actions without a url send there, and the readiness probe connects there.
  add(cfg.url, `sinks.${opts.sink}.url`);
  for (const a of actions) {
    const url = (a.settings as HttpAction).url;
    if (url !== undefined) add(url, `${a.atKey(['url'])}: rule ${a.ruleId}: url`);
  }
  const found = await Promise.all([...origins.values()].map((o) => connectOnce(cfg, o, signal)));
  return found.filter((p): p is VerifyProblem => p !== undefined);
}

/** Connects to one origin and closes; resolves with a TLS problem, rejects when the server cannot be reached. */
function connectOnce(cfg: HttpConfig, o: Origin, signal: AbortSignal): Promise<VerifyProblem | undefined> {
  const secure = o.url.protocol === 'https:';
  const host = o.url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(o.url.port) || (secure ? 443 : 80);
  const where = `${o.url.host || host}${o.url.port ? '' : `:${port}`}`;
  return new Promise((resolve, reject) => {
    let sock: net.Socket;
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', abort);
      sock.destroy();
      if (!err) return resolve(undefined);
      const code = (err as { code?: unknown }).code;
      if (secure && isTlsFailure(code)) {
        return resolve({
          message: `${o.at}: ${o.url.origin}: TLS with the server at ${where} fails: ${err.message}${code ? ` (${String(code)})` : ''}; the sink's requests would fail the same way: give tls.ca_file (the CA that signed its certificate) or tls.servername (the name it holds), or fix the server's certificate`,
        });
      }
      reject(new Error(`no connection to ${where} (${o.at}): ${err.message}`, { cause: err }));
    };
    const abort = () => done(new Error('the check was stopped (its time ran out)'));
    const timeout = () => done(new Error(`no ${secure ? 'TLS ' : ''}connection within timeout_ms (${cfg.timeout_ms} ms)`));
    if (secure) {
      const t = tlsOptions(cfg);
      sock = tls.connect({ host, port, ...t, servername: t.servername ?? (net.isIP(host) ? undefined : host), ALPNProtocols: ['http/1.1'] });
      sock.once('secureConnect', () => done());
    } else {
      sock = net.connect({ host, port });
      sock.once('connect', () => done());
    }
    sock.setTimeout(cfg.timeout_ms, timeout);
    sock.once('error', (err) => done(err));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}
