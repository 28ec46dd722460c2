// An HTTP server for the webhook (http sink) tests, on a free loopback port: it takes JSON bodies
// (one record, a JSON array of them, or JSON lines), keeps every record it answered 2xx for, and
// answers each request as `respond` decides (a status, headers, a body, or no answer at all, for a
// timeout). stop() closes it and every connection; start() listens again on the same port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the client times out). */
  hang?: boolean;
}

export interface WebhookRequest {
  readonly n: number;
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly records: Array<Record<string, unknown>>;
  readonly at: number;
}

export interface WebhookServer {
  readonly url: string;
  readonly port: number;
  /** Records of the requests answered 2xx, in the order they were answered. */
  readonly stored: Array<Record<string, unknown>>;
  /** Every request received, with the reply's status (undefined: not answered). */
  readonly requests: Array<WebhookRequest & { status?: number }>;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

/** The records of a body: a JSON array, JSON lines, or one JSON value. */
export function recordsOf(body: string, contentType: string | undefined): Array<Record<string, unknown>> {
  if (contentType?.includes('ndjson'))
    return body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const v = JSON.parse(body);
  return Array.isArray(v) ? v : [v];
}

export async function startWebhookServer(respond: (req: WebhookRequest) => Reply = () => ({ status: 200 })): Promise<WebhookServer> {
  const stored: Array<Record<string, unknown>> = [];
  const requests: Array<WebhookRequest & { status?: number }> = [];
  const hung = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        n: requests.length,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        records: recordsOf(Buffer.concat(chunks).toString(), req.headers['content-type']),
        at: Date.now(),
      };
      const entry: WebhookRequest & { status?: number } = r;
      requests.push(entry);
      const reply = respond(r);
      if (reply.hang) {
        hung.add(res);
        return;
      }
      entry.status = reply.status;
      if (reply.status >= 200 && reply.status < 300) stored.push(...r.records);
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body ?? '');
    });
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  let up = true;
  const stop = async () => {
    if (!up) return;
    up = false;
    for (const res of hung) res.destroy();
    hung.clear();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stored,
    requests,
    stop,
    async start() {
      await listen(port);
      up = true;
    },
    dispose: stop,
  };
}
