// Summarises a V8 CPU profile (from BENCH_CPU_PROF, see bench/e2e/weir-config.ts): the functions with the most
// self time, and the same grouped by source file, as µs per message when -n is given.
//
//   npx tsx bench/profile.ts /tmp/prof/CPU.*.cpuprofile -n 100000
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { n: { type: 'string', short: 'n' }, top: { type: 'string', default: '30' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: npx tsx bench/profile.ts <file.cpuprofile> [-n messages] [--top 30]\n');
  process.exit(2);
}
const prof = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (const [i, id] of prof.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));

const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const perMsg = values.n ? Number(values.n) : 0;
const fmt = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%${perMsg ? `  ${(us / perMsg).toFixed(2).padStart(6)} µs/msg` : ''}`;
const short = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/') || '(native)';

function top(key: (n: ProfileNode) => string): void {
  const sums = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const k = key(byId.get(id)!);
    sums.set(k, (sums.get(k) ?? 0) + us);
  }
  for (const [k, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) process.stdout.write(`${fmt(us)}  ${k}\n`);
}

process.stdout.write(
  `total ${(total / 1e6).toFixed(2)} s sampled${perMsg ? `, ${(total / perMsg).toFixed(1)} µs per message` : ''}\n\nby function (self time):\n`,
);
top((n) => `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`);
process.stdout.write('\nby file:\n');
top((n) => short(n.callFrame.url) || n.callFrame.functionName);
