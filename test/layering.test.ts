// Which way imports may go between the tree's parts, so that a newcomer can add a sink without
// reading the core, and run the tests without the benchmarks:
// - outside src/sinks/, src/ imports no sink's own folder (src/sinks/<type>/): the core, the CLI and
//   reconcile reach a sink through its SinkType (src/sinks/types.ts, registry.ts, all.ts) only;
// - test/ imports nothing from bench/: benchmarks build on the test harness (and its load
//   generator, test/harness/load/), never the other way round.
// - src/ has no import circle: no file reaches itself by following relative imports, type-only
//   imports and lazy import() included (a type-only circle costs nothing at run time, but it still
//   means neither file can be read, moved or tested without the other);
// - src/ imports only downwards: every file is in one layer of LAYERS below, and imports only files
//   of its own layer or a lower one.
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

/** Every .ts file of src/ with its relative imports (static, type-only, re-exports, lazy import()). */
function srcGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files(join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))) {
    graph.set(
      relative(ROOT, f),
      relativeImports(f).map((t) => t.replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** The import circles of `graph`: each strongly connected set of more than one file, or a file importing itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The layers of src/, lowest first. A file is in the layer of the longest prefix that names it.
 * What each layer is for: src/core/README.md (core), src/rules/README.md (rules), STYLE.md.
 */
const LAYERS: ReadonlyArray<{ name: string; prefixes: readonly string[] }> = [
  // Error codes and types, logging, metric names, SQL quoting, the package's paths and version.
  {
    name: 'base',
    prefixes: ['src/errors.ts', 'src/error-codes.ts', 'src/log.ts', 'src/log-pretty.ts', 'src/paths.ts', 'src/version.ts', 'src/metrics/', 'src/sql/'],
  },
  // The config file's schemas and the checks on its values (not the loader: see config-loader).
  { name: 'config', prefixes: ['src/config/'] },
  // Named retry policies (sink retry, dead-letter retry, reconnect).
  { name: 'retry', prefixes: ['src/retry/'] },
  // The rule engine, a pure library.
  { name: 'rules', prefixes: ['src/rules/'] },
  // The schema registry (Protobuf, Avro, JSON Schema) and Sparkplug B, behind the rule engine's PayloadSchemas.
  { name: 'schemas', prefixes: ['src/schemas/'] },
  // The dead letter, its line, the store interfaces, the file and topic stores.
  { name: 'dead-letters', prefixes: ['src/dead-letters/'] },
  // The sink contract, registry and drivers.
  { name: 'sinks', prefixes: ['src/sinks/'] },
  // The loaded configuration and its loader, which compiles rules and validates sink settings.
  {
    name: 'config-loader',
    prefixes: ['src/config/types.ts', 'src/config/load.ts', 'src/config/template-check.ts', 'src/config/rule-error-at.ts', 'src/config/json-schema.ts'],
  },
  // MQTT in, PUBACK out.
  { name: 'ingest', prefixes: ['src/core/ingest/'] },
  // One message from its event to its sinks.
  { name: 'path', prefixes: ['src/core/path/'] },
  // The replicas of one share group: presence, the leave decision, adoption of orphaned sessions.
  { name: 'fleet', prefixes: ['src/core/fleet/'] },
  // The application: weir run (runtime, http), where dead letters go, verify/migrate.
  { name: 'app', prefixes: ['src/core/app/'] },
  // The demo's embedded broker and database.
  { name: 'embedded', prefixes: ['src/embedded/'] },
  // Counting what arrived against what the brokers say they sent.
  { name: 'reconcile', prefixes: ['src/reconcile/'] },
  // The commands, and the bin entry and doc generator scripts.
  { name: 'cli', prefixes: ['src/cli/', 'src/main.ts', 'src/errors-doc.ts'] },
];

/** The layer of a file: its rank in LAYERS, by the longest prefix naming it; -1 when none does. */
function layerOf(file: string): number {
  let best = -1;
  let bestLength = 0;
  for (const [rank, layer] of LAYERS.entries()) {
    for (const p of layer.prefixes) {
      if (file.startsWith(p) && p.length > bestLength) {
        best = rank;
        bestLength = p.length;
      }
    }
  }
  return best;
}

/** Imports from a lower layer to a higher one, and files no layer names. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const bad: string[] = [];
  for (const [file, imports] of graph) {
    const from = layerOf(file);
    if (from < 0) {
      bad.push(`${file} is in no layer`);
      continue;
    }
    for (const t of imports) {
      const to = layerOf(t);
      if (to > from) bad.push(`${file} (${LAYERS[from]!.name}) imports ${t} (${LAYERS[to]!.name})`);
    }
  }
  return bad;
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

test('src/ has no import circle (type-only imports and import() included)', () => {
  assert.deepEqual(circles(srcGraph()), []);
});

test('src/ imports only from its own layer or a lower one', () => {
  assert.deepEqual(upwardImports(srcGraph()), []);
});

test('the checks see a circle and an upward import', () => {
  // Guards the two tests above against passing because the graph or the layers are empty.
  const graph = srcGraph();
  assert.ok(graph.size > 100 && [...graph.values()].flat().length > 300, 'the graph has the files and their imports');
  const session = 'src/core/ingest/mqtt-session.ts';
  const reader = 'src/core/ingest/packet-reader.ts';
  assert.ok(graph.get(session)?.includes(reader), 'the session imports the packet reader');
  const withCircle = new Map(graph).set(reader, [...graph.get(reader)!, session]);
  assert.deepEqual(
    circles(withCircle).map((c) => c.includes(session) && c.includes(reader)),
    [true],
  );
  const upward = new Map(graph).set('src/rules/index.ts', [...graph.get('src/rules/index.ts')!, 'src/sinks/types.ts']);
  assert.deepEqual(upwardImports(upward), ['src/rules/index.ts (rules) imports src/sinks/types.ts (sinks)']);
});
