// The console's JSON API under /api/ (api.ts lists the endpoints and the rules): routing, access,
// the CSRF check of every POST, the body limit, and errors as { error } with their status, never
// a stack trace. http.ts hands every /api/ request here; the page and its assets are served apart.
import type http from 'node:http';
import type { Logger } from '../../../log.js';
import { toJson } from '../../../rules/values/to-json.js';
import { errorText } from '../../../errors.js';
import { accessFor, csrfProblem, MAX_BODY_BYTES, readBody } from './access.js';
import type { Access } from './api.js';
import { ConsoleLetters } from './dead-letters.js';
import type { ConsoleDeps } from './deps.js';
import { ReconcileView } from './reconcile-view.js';
import { RequestError } from './request-error.js';
import { startTrace, traceState } from './trace-view.js';
import { tryRule } from './try-rule.js';
import { overview, rules, sinks } from './views.js';

type Need = 'read' | 'payloads' | 'writes';

interface Route {
  readonly method: 'GET' | 'POST';
  readonly need: Need;
  /** The answer; `body` is the parsed JSON of a POST, `rest` the path after the route's prefix. */
  handle(ctx: { access: Access; query: URLSearchParams; body: unknown; rest: string }): unknown;
}

export class ConsoleApi {
  private readonly letters: ConsoleLetters;
  private readonly reconcile: ReconcileView;
  private readonly routes: ReadonlyMap<string, Route>;
  private readonly abort = new AbortController();

  constructor(
    private readonly d: ConsoleDeps,
    private readonly log: Logger,
  ) {
    this.reconcile = new ReconcileView(d);
    this.letters = new ConsoleLetters(d, log, this.abort.signal, (l) => {
      if (l.sink) this.reconcile.credit(l.sink, l.ruleId, 1);
    });
    const get = (need: Need, handle: Route['handle']): Route => ({ method: 'GET', need, handle });
    const post = (need: Need, handle: Route['handle']): Route => ({ method: 'POST', need, handle });
    this.routes = new Map<string, Route>([
      ['GET /api/overview', get('read', ({ access }) => overview(d, access))],
      ['GET /api/rules', get('read', () => rules(d))],
      ['GET /api/sinks', get('read', () => sinks(d))],
      ['GET /api/reconcile', get('read', () => this.reconcile.view())],
      ['POST /api/try', post('payloads', ({ body }) => tryRule(d, body))],
      ['POST /api/trace', post('payloads', ({ body }) => startTrace(d, body))],
      ['GET /api/trace', get('payloads', () => traceState(d.tracer))],
      ['GET /api/dead-letters', get('payloads', ({ query }) => this.letters.list(query))],
      ['POST /api/dead-letters/replay', post('writes', ({ body }) => this.letters.replay(body))],
      ['POST /api/dead-letters/purge', post('writes', ({ body }) => this.letters.purge(body))],
      // /api/dead-letters/<id>: matched by prefix below.
      ['GET /api/dead-letters/', get('payloads', ({ rest }) => this.letters.show(decodeURIComponent(rest)))],
    ]);
  }

  /** The view of the live proof, for tests that wait for the sinks' counts. */
  get reconcileView(): ReconcileView {
    return this.reconcile;
  }

  /** Answers a request under /api/; `authed` is whether it passed http.basic_auth (true when none is set). */
  handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL, authed: boolean): void {
    const send = (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      // toJson: output records may hold 64-bit integers and whole floats (2.0), as weir eval prints them.
      const text = toJson(body);
      // Never cached, never sniffed, never framed: the answers are live and some hold payloads.
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
      res.end(text);
    };
    const fail = (status: number, error: string, headers: http.OutgoingHttpHeaders = {}) => {
      // A body not read (refused before it was) would otherwise hold the connection.
      if (!req.readableEnded) req.resume();
      send(status, { error }, headers);
    };
    if (!authed) return fail(401, 'authentication required', { 'www-authenticate': 'Basic realm="weir", charset="UTF-8"' });
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const found = this.route(method ?? '', url.pathname);
    if (!found) {
      const other = this.route(method === 'GET' ? 'POST' : 'GET', url.pathname);
      if (other) return fail(405, `${url.pathname} answers ${other.route.method} only`, { allow: other.route.method === 'GET' ? 'GET, HEAD' : 'POST' });
      return fail(404, `no API endpoint ${url.pathname} (docs/console.md lists them)`);
    }
    const { route, rest } = found;
    const access = accessFor(this.d.cfg.http, authed);
    if (route.need !== 'read' && !access[route.need]) return fail(403, access.reason);
    if (route.method === 'POST') {
      const problem = csrfProblem(req);
      if (problem) return fail(403, problem);
    }
    void this.answer(req, route, { access, query: url.searchParams, rest }).then(
      (body) => send(200, body),
      (err: unknown) => {
        if (err instanceof RequestError) return fail(err.status, err.message);
        this.log.warn({ path: url.pathname, err: errorText(err) }, 'console API request failed');
        fail(500, errorText(err));
      },
    );
  }

  /** Ends what the API started (a replay in progress, the letter store). */
  async close(): Promise<void> {
    this.abort.abort();
    this.d.tracer.active?.end();
    await this.letters.close();
  }

  private async answer(req: http.IncomingMessage, route: Route, ctx: { access: Access; query: URLSearchParams; rest: string }): Promise<unknown> {
    let body: unknown;
    if (route.method === 'POST') {
      const raw = await readBody(req);
      if (raw === 'too large') throw new RequestError(413, `the request body is larger than ${MAX_BODY_BYTES / 1024} KB`);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        throw new RequestError(400, `the request body is not JSON: ${errorText(err)}`);
      }
    }
    return route.handle({ ...ctx, body });
  }

  private route(method: string, path: string): { route: Route; rest: string } | undefined {
    const exact = this.routes.get(`${method} ${path}`);
    if (exact) return { route: exact, rest: '' };
    const prefix = '/api/dead-letters/';
    const byId = this.routes.get(`${method} ${prefix}`);
    if (byId && !this.routes.has(`POST ${path}`) && path.startsWith(prefix) && path.length > prefix.length && !path.slice(prefix.length).includes('/'))
      return { route: byId, rest: path.slice(prefix.length) };
    return undefined;
  }
}
