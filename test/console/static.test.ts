// The console's static files (src/core/app/console/console-static.ts) on a plain HTTP server:
// `/` is index.html and /assets/ the build's files by name, with their content types, an ETag that
// answers 304, gzip when asked; nothing outside the build's directory whatever the path says; and a
// 503 naming `npm run build` when there is no build.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { ConsoleStatic } from '../../src/core/app/console/console-static.js';
import { tempDir } from '../harness/process.js';

const servers: http.Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A server that answers the console's paths from `dir`, and 418 for any other. */
async function serve(dir: string): Promise<string> {
  const page = new ConsoleStatic(dir);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (ConsoleStatic.serves(path)) return page.serve(path, req, res);
    res.writeHead(418).end();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw GET, so that the path reaches the server as written (fetch would resolve `..`). */
function rawGet(
  base: string,
  path: string,
  headers: http.OutgoingHttpHeaders = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/`, { path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the page and its assets: content types, ETag and 304, gzip, a strict content security policy', async () => {
  const root = tempDir('console-static');
  const dir = join(root, 'console');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const js = `console.log(${JSON.stringify('x'.repeat(2000))});`;
  writeFileSync(join(dir, 'app.js'), js);
  writeFileSync(join(dir, 'app.css'), 'body{color:red}');
  writeFileSync(join(root, 'secret.txt'), 'not for the page');
  const base = await serve(dir);

  const index = await rawGet(base, '/');
  assert.equal(index.status, 200);
  assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(index.body.toString(), '<!doctype html><title>t</title>');
  assert.match(String(index.headers['content-security-policy']), /default-src 'none'.*frame-ancestors 'none'/);
  assert.equal(index.headers['x-content-type-options'], 'nosniff');

  const app = await rawGet(base, '/assets/app.js');
  assert.equal(app.status, 200);
  assert.equal(app.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(app.body.toString(), js);
  assert.equal(app.headers['cache-control'], 'no-cache');
  const etag = String(app.headers.etag);
  assert.match(etag, /^"[A-Za-z0-9_-]{22}"$/);
  const again = await rawGet(base, '/assets/app.js', { 'if-none-match': etag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal((await rawGet(base, '/assets/app.css')).headers['content-type'], 'text/css; charset=utf-8');

  const gz = await rawGet(base, '/assets/app.js', { 'accept-encoding': 'gzip, deflate' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gz.body.length < js.length / 10, `gzipped ${gz.body.length} bytes of ${js.length}`);
  assert.equal(gunzipSync(gz.body).toString(), js);

  // A new build (a changed file) is served at once, with a new ETag.
  writeFileSync(join(dir, 'app.js'), 'console.log(2);');
  const rebuilt = await rawGet(base, '/assets/app.js', { 'if-none-match': etag });
  assert.equal(rebuilt.status, 200);
  assert.equal(rebuilt.body.toString(), 'console.log(2);');
  assert.notEqual(rebuilt.headers.etag, etag);

  // Only the build's files, by name: no way out of the directory, nothing that is not a file.
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'x.js'), 'x');
  for (const path of [
    '/assets/../secret.txt',
    '/assets/..%2fsecret.txt',
    '/assets/%2e%2e/secret.txt',
    '/assets/..\\secret.txt',
    '/assets/sub',
    '/assets/sub/x.js',
    '/assets/',
    '/assets/missing.js',
    `/assets/${encodeURIComponent(join(root, 'secret.txt'))}`,
  ]) {
    const r = await rawGet(base, path);
    assert.equal(r.status, 404, path);
    assert.doesNotMatch(r.body.toString(), /not for the page/, path);
  }
});

test('no build: / answers 503 and names npm run build', async () => {
  const base = await serve(join(tempDir('console-static'), 'missing'));
  for (const path of ['/', '/assets/app.js']) {
    const r = await rawGet(base, path);
    assert.equal(r.status, 503, path);
    assert.match(r.body.toString(), /console is not built: .*missing is missing\. Run `npm run build`/);
  }
});
