// docs/errors.md and the error codes in src/ stay in step.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './harness/weir.js';

const CODE = /'((?:config|rule|sink|migrate|demo|dlq)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*)'/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('every error code in src/ is in docs/errors.md, and every documented code is used', () => {
  const inCode = new Set<string>();
  for (const f of sources(join(ROOT, 'src'))) for (const m of readFileSync(f, 'utf8').matchAll(CODE)) if (!m[1]!.endsWith('.json')) inCode.add(m[1]!);
  const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  const inDoc = new Set<string>();
  for (const row of doc.matchAll(/^\| `([a-z0-9_.]+)` \|/gm)) inDoc.add(row[1]!);
  const undocumented = [...inCode].filter((c) => !inDoc.has(c)).sort();
  const unused = [...inDoc].filter((c) => !inCode.has(c)).sort();
  assert.deepEqual(undocumented, [], 'codes missing from docs/errors.md');
  assert.deepEqual(unused, [], 'codes in docs/errors.md that src/ no longer raises');
});
