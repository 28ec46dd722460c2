// The console's page as weir serves it (docs/console.md): `/` is dist/console/index.html and
// `/assets/<name>` a file beside it, built by `npm run build` (console/build.ts). Only names that
// are files in that directory are served: a request names a file, never a path, so `..` or `%2f`
// cannot reach anything else. Each file is read once and kept with its gzip and an ETag (its
// hash); the browser revalidates (no-cache) and gets 304 while the build is the same, so a new
// build is seen at the next load without a stale cache. The directory is only read when someone
// opens the page: with the console closed it costs nothing. Authentication is the caller's (http.ts:
// the same basic auth as /metrics).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type http from 'node:http';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PACKAGE_ROOT } from '../../../paths.js';

export const CONSOLE_DIR = join(PACKAGE_ROOT, 'dist', 'console');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
};

/**
 * The page loads nothing from elsewhere (connect, script, style, image: 'self'), cannot be framed
 * (a framing site could click replay or purge), and the browser does not guess content types.
 * uPlot and Preact set element styles from script, which style-src governs as inline styles.
 */
const PAGE_HEADERS: http.OutgoingHttpHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface Asset {
  readonly body: Buffer;
  readonly gzip: Buffer | undefined;
  readonly etag: string;
  readonly type: string;
  /** The file's modification time and size when read: a new build changes one of them. */
  readonly stamp: string;
}

export class ConsoleStatic {
  private readonly cache = new Map<string, Asset>();

  constructor(private readonly dir = CONSOLE_DIR) {}

  /** Whether `path` is the page's: `/` or under `/assets/`. */
  static serves(path: string): boolean {
    return path === '/' || path.startsWith('/assets/');
  }

  /** Answers a GET or HEAD of one of the page's paths (serves(path)). */
  serve(path: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    const name = path === '/' ? 'index.html' : path.slice('/assets/'.length);
    const files = this.files();
    if (!files) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`weir's console is not built: ${this.dir} is missing. Run \`npm run build\` (it bundles console/ into dist/console/) and reload.\n`);
      return;
    }
    const asset = files.has(name) ? this.asset(name) : undefined;
    if (!asset) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('not found\n');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      ...PAGE_HEADERS,
      'content-type': asset.type,
      etag: asset.etag,
      'cache-control': 'no-cache',
      vary: 'accept-encoding',
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = asset.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip! : asset.body;
    res.writeHead(200, { ...headers, 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(body);
  }

  /** The names of the built files, or undefined when there is no build. */
  private files(): Set<string> | undefined {
    try {
      return new Set(readdirSync(this.dir, { withFileTypes: true }).flatMap((d) => (d.isFile() ? [d.name] : [])));
    } catch {
      return undefined;
    }
  }

  /** A file, read again when a new build replaced it. */
  private asset(name: string): Asset | undefined {
    const file = join(this.dir, name);
    const type = TYPES[extname(name)] ?? 'application/octet-stream';
    let stamp: string;
    try {
      const st = statSync(file);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {
      return undefined;
    }
    const kept = this.cache.get(name);
    if (kept && kept.stamp === stamp) return kept;
    const body = readFileSync(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const gzip = type.startsWith('text/') || type === 'image/svg+xml' || type === 'application/json' ? gzipSync(body) : undefined;
    const asset = { body, gzip, etag, type, stamp };
    this.cache.set(name, asset);
    return asset;
  }
}
