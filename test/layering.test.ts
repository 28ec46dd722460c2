// Which way imports may go between the tree's parts, so that a newcomer can add a sink without
// reading the core, and run the tests without the benchmarks:
// - outside src/sinks/, src/ imports no sink's own folder (src/sinks/<type>/): the core, the CLI and
//   reconcile reach a sink through its SinkType (src/sinks/types.ts, registry.ts, all.ts) only;
// - test/ imports nothing from bench/: benchmarks build on the test harness (and its load
//   generator, test/harness/load/), never the other way round.
// (src/rules' own rule is test/rules/purity.test.ts.)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mjs)$/.test(p) ? [p] : [];
  });
}

/** Every relative import of `file`, as a path from the repository's root. */
function relativeImports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    out.push(relative(ROOT, resolve(dirname(file), m[1] ?? m[2]!)));
  }
  return out;
}

function offending(dir: string, skip: (file: string) => boolean, bad: (target: string) => boolean): string[] {
  return files(join(ROOT, dir))
    .filter((f) => !skip(relative(ROOT, f)))
    .flatMap((f) =>
      relativeImports(f)
        .filter(bad)
        .map((t) => `${relative(ROOT, f)} imports ${t}`),
    );
}

test("outside src/sinks/, src/ imports no sink's own folder", () => {
  assert.deepEqual(
    offending(
      'src',
      (f) => f.startsWith('src/sinks/'),
      (t) => /^src\/sinks\/[^/]+\//.test(t),
    ),
    [],
  );
});

test('test/ imports nothing from bench/', () => {
  assert.deepEqual(
    offending(
      'test',
      () => false,
      (t) => t.startsWith('bench/'),
    ),
    [],
  );
});

test('the check sees an import: bench/ does import the test harness', () => {
  // Guards the two tests above against passing because the pattern matches nothing.
  assert.notDeepEqual(
    offending(
      'bench',
      () => false,
      (t) => t.startsWith('test/harness/'),
    ),
    [],
  );
});
