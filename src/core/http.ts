// The HTTP side: /metrics for Prometheus, /healthz (the process answers), /readyz (broker
// connected and every sink reachable), /rules and /sinks (JSON status).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface StatusSource {
  readiness(): { ready: boolean; detail: Record<string, unknown> };
  rules(): unknown;
  sinks(): unknown;
}

export async function startHttp(host: string, port: number, registry: Registry, status: StatusSource): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return json(405, { error: 'only GET' });
    switch (url) {
      case '/metrics':
        registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': registry.contentType });
            res.end(text);
          },
          (err: Error) => json(500, { error: err.message }),
        );
        return;
      case '/healthz':
        return json(200, { status: 'ok' });
      case '/readyz': {
        const r = status.readiness();
        return json(r.ready ? 200 : 503, { ready: r.ready, ...r.detail });
      }
      case '/rules':
        return json(200, status.rules());
      case '/sinks':
        return json(200, status.sinks());
      default:
        return json(404, { error: 'not found', endpoints: ['/metrics', '/healthz', '/readyz', '/rules', '/sinks'] });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function boundPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}
