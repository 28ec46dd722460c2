// What every benchmark prints and records: the machine it ran on, a table, and a JSON result
// under bench/results/ (one file per benchmark, overwritten by the latest run; git keeps history).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RESULTS = join(fileURLToPath(new URL('.', import.meta.url)), 'results');

export function machine(): Record<string, unknown> {
  return { cpus: cpus().length, cpu_model: cpus()[0]?.model, mem_gb: Math.round(totalmem() / 2 ** 30), node: process.version, loadavg_1m: loadavg()[0] };
}

export function printTable(rows: Array<Record<string, unknown>>): void {
  if (!rows.length) return;
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padStart(width[i]!)).join('  ');
  process.stdout.write(`${line(cols)}\n${rows.map((r) => line(cols.map((c) => String(r[c])))).join('\n')}\n`);
}

export function writeResult(name: string, result: object): void {
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`wrote bench/results/${name}.json\n`);
}
