// weir test: run the `tests:` of rule files (event → expected outputs, no match, or error) and
// print a pass/fail table. Needs no broker, no sink and no weir.yaml.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { errorText } from '../errors.js';
import { runRuleTests, type RuleTestSpec } from '../rules/rule-tests.js';
import { parse } from './args.js';
import type { Command } from './commands.js';

const HELP = `usage: weir test [PATH ...]

Runs the tests: of each rule file (default: ./rules). A PATH is a rule file or a directory of
them. Prints one line per test and exits 1 if any test fails or a file cannot be read.
`;

function ruleFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()
    .map((n) => join(path, n));
}

export const testCommand: Command = {
  summary: "run the rule files' tests: offline",
  async run(args) {
    const p = parse(args, {}, HELP, true);
    if ('exit' in p) return p.exit;
    const paths = p.positionals.length ? p.positionals : ['rules'];
    let passed = 0;
    let failed = 0;
    for (const file of paths.flatMap((x) => {
      try {
        return ruleFiles(x);
      } catch (err) {
        process.stderr.write(`error: ${x}: ${errorText(err)}\n`);
        failed++;
        return [];
      }
    })) {
      const name = relative(process.cwd(), file);
      let doc: Record<string, unknown>;
      try {
        const d = parseDocument(readFileSync(file, 'utf8'));
        if (d.errors.length) throw new Error(d.errors[0]!.message);
        doc = (d.toJS() ?? {}) as Record<string, unknown>;
      } catch (err) {
        process.stdout.write(`FAIL  ${name}: cannot read: ${errorText(err)}\n`);
        failed++;
        continue;
      }
      const tests = (doc.tests ?? []) as RuleTestSpec['tests'];
      if (!tests.length) {
        process.stdout.write(`----  ${name}: no tests\n`);
        continue;
      }
      const spec: RuleTestSpec = { sql: doc.sql as string | undefined, jsonata: doc.jsonata as string | undefined, filters: doc.from as string[] | undefined, tests };
      for (const r of await runRuleTests(spec, String(doc.id ?? name))) {
        if (r.pass) passed++;
        else failed++;
        process.stdout.write(`${r.pass ? 'PASS' : 'FAIL'}  ${name} #${r.index + 1} ${r.name}${r.pass ? '' : `\n      ${r.message}`}\n`);
      }
    }
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    return failed ? 1 : 0;
  },
};
