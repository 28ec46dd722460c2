// The HTTP side: /metrics for Prometheus, /healthz (the process answers), /readyz (broker
// connected and every sink reachable), /rules and /sinks (JSON status), and the console: its JSON
// API under /api/ (console/routes.ts, the only paths that take POST) and its page at `/` with its
// files under /assets/ (console/console-static.ts). HEAD is answered like GET without the body
// (load balancers and uptime checks use it). With http.basic_auth everything but
// /healthz and /readyz's verdict needs the credentials: probes cannot always send them, and the
// verdict tells nothing an attacker could use, while the detail names tables and errors.
// With http.tls the same handler is served over HTTPS only (config/http-tls.ts; a client
// certificate is required when client_ca_file is set): plain HTTP on that port fails its handshake.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { httpsOptions } from '../../config/http-tls.js';
import type { WeirFileConfig } from '../../config/schema.js';
import { WeirError } from '../../errors.js';
import { basicAuth } from './basic-auth.js';
import { ConsoleStatic } from './console/console-static.js';

export interface StatusSource {
  readiness(): { ready: boolean; detail: Record<string, unknown> };
  rules(): unknown;
  sinks(): unknown;
  /** The console's API: answers every request under /api/ (`authed`: passed http.basic_auth, or none is set). */
  consoleApi?(req: http.IncomingMessage, res: http.ServerResponse, url: URL, authed: boolean): void;
}

const ENDPOINTS = ['/', '/metrics', '/healthz', '/readyz', '/rules', '/sinks', '/api/'];

export async function startHttp(cfg: WeirFileConfig['http'], registry: Registry, status: StatusSource): Promise<http.Server> {
  const authorized = basicAuth(cfg.basic_auth);
  const page = new ConsoleStatic();
  const handler: http.RequestListener = (req, res) => {
    // Origin-form only ('/path?query'); anything else is no path weir serves.
    const target = req.url ?? '/';
    const parsed = new URL(target.startsWith('/') ? `http://weir${target}` : 'http://weir/-');
    const url = parsed.pathname;
    // For HEAD, node's ServerResponse sends the headers and drops the body written to it.
    const json = (code: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(code, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const authed = authorized(req.headers.authorization);
    if (url.startsWith('/api/') && status.consoleApi) return status.consoleApi(req, res, parsed, authed);
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'only GET and HEAD' }, { allow: 'GET, HEAD' });
    const denied = () => json(401, { error: 'authentication required' }, { 'www-authenticate': 'Basic realm="weir", charset="UTF-8"' });
    switch (url) {
      case '/healthz':
        return json(200, { status: 'ok' });
      case '/readyz': {
        const r = status.readiness();
        return json(r.ready ? 200 : 503, authed ? { ready: r.ready, ...r.detail } : { ready: r.ready });
      }
      case '/metrics':
        if (!authed) return denied();
        registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': registry.contentType });
            res.end(text);
          },
          (err: Error) => json(500, { error: err.message }),
        );
        return;
      case '/rules':
        return authed ? json(200, status.rules()) : denied();
      case '/sinks':
        return authed ? json(200, status.sinks()) : denied();
      default:
        if (ConsoleStatic.serves(url)) return authed ? page.serve(url, req, res) : denied();
        return json(404, { error: 'not found', endpoints: ENDPOINTS });
    }
  };
  const server = cfg.tls ? https.createServer(httpsOptions(cfg.tls), handler) : http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new WeirError('config.http_port_in_use', `http.port ${cfg.port}: another process already listens on ${cfg.host}:${cfg.port}`, { cause: err })
          : err,
      ),
    );
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  return server;
}

export function boundPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}
