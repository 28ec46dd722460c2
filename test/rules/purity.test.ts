// src/rules is a pure library: no imports of the runtime, the sinks, the config, or I/O.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../src/rules/', import.meta.url));
const FORBIDDEN = [
  /^\.\.\/(\.\.\/)*(core|sinks|config|cli|metrics|retry)(\/|$)/,
  /^(node:)?(net|tls|fs|fs\/promises|http|https|http2|dgram|child_process|cluster|worker_threads|dns|readline)$/,
  /^(pg|mqtt|mqtt-packet|kafkajs|pulsar-client|ws|pino|prom-client|p-queue|yaml)(\/|$)/,
];

/**
 * The one exception, by file and import: jq() runs jq's WebAssembly build in a worker thread,
 * because a call that loops cannot be interrupted on the thread that makes it, and a per-call
 * timeout is part of EMQX's jq(). The worker computes only: the filter over the value it is sent.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = { 'functions/jq.ts': ['node:worker_threads'] };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('src/rules imports nothing from the runtime, sinks, config or I/O', () => {
  const bad: string[] = [];
  for (const file of files(root)) {
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2] ?? '';
      if (ALLOWED[file.slice(root.length)]?.includes(spec)) continue;
      if (FORBIDDEN.some((re) => re.test(spec))) bad.push(`${file.slice(root.length)}: ${spec}`);
    }
  }
  assert.deepEqual(bad, []);
});
