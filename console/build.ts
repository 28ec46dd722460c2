// Builds the console's page (docs/console.md) into dist/console/: index.html, app.js and app.css,
// bundled and minified by esbuild from console/src/ with Preact and uPlot inside, so that weir
// serves every byte itself (no CDN, no external font). `npm run build` runs it after tsc; it prints
// each file's size raw and gzipped and fails when the total passes the budget (issue 32: 150 KB
// gzipped), so a dependency that grows is seen at the build, not in a browser.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const HERE = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_OUT = join(HERE, '..', 'dist', 'console');
/** The page's assets, gzipped, at most (issue 32). */
export const BUDGET_GZIP_BYTES = 150 * 1024;

export interface BuiltFile {
  readonly name: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

/** Bundles the page into `outDir` (emptied first); resolves with each file's size. */
export async function buildConsole(outDir = CONSOLE_OUT): Promise<BuiltFile[]> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { app: join(HERE, 'src/main.tsx') },
    outdir: outDir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: join(HERE, 'tsconfig.json'),
  });
  writeFileSync(join(outDir, 'index.html'), readFileSync(join(HERE, 'index.html')));
  return ['index.html', 'app.js', 'app.css'].map((name) => {
    const body = readFileSync(join(outDir, name));
    return { name, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildConsole();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const f of files) process.stdout.write(`dist/console/${f.name.padEnd(10)} ${kb(f.bytes).padStart(9)}  ${kb(f.gzipBytes).padStart(8)} gzipped\n`);
  const total = files.reduce((s, f) => s + f.gzipBytes, 0);
  process.stdout.write(`console assets: ${kb(total)} gzipped in total (budget ${kb(BUDGET_GZIP_BYTES)})\n`);
  if (total > BUDGET_GZIP_BYTES) {
    process.stderr.write(`console assets: ${kb(total)} gzipped is over the budget of ${kb(BUDGET_GZIP_BYTES)}\n`);
    process.exitCode = 1;
  }
}
