// The error catalogue (src/error-codes.ts), the codes src/ raises and docs/errors.md stay one thing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_SECTIONS } from '../src/error-codes.js';
import { ERRORS_DOC, renderErrorsDoc } from '../src/errors-doc.js';
import { ROOT } from './harness/weir.js';

const CODE = /['`]((?:config|rule|sink|migrate|demo|dlq|reconcile)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*)['`]/g;
const CATALOGUE = new Set(ERROR_SECTIONS.flatMap((s) => Object.keys(s.codes)));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('docs/errors.md is what `npm run errors-doc` generates from the catalogue', () => {
  assert.equal(readFileSync(ERRORS_DOC, 'utf8'), renderErrorsDoc(), 'docs/errors.md differs from src/error-codes.ts: run `npm run errors-doc`');
});

test('every error code in src/ is in the catalogue, and every catalogued code is raised somewhere', () => {
  const inCode = new Set<string>();
  for (const f of sources(join(ROOT, 'src'))) {
    if (f.endsWith('error-codes.ts')) continue;
    for (const m of readFileSync(f, 'utf8').matchAll(CODE)) if (!m[1]!.endsWith('.json')) inCode.add(m[1]!);
  }
  assert.deepEqual([...inCode].filter((c) => !CATALOGUE.has(c)).sort(), [], 'codes missing from src/error-codes.ts');
  assert.deepEqual([...CATALOGUE].filter((c) => !inCode.has(c)).sort(), [], 'catalogued codes that src/ no longer raises');
});
