// weir test: run the `tests:` of rule files (event → expected outputs, no match, or error) and
// print a pass/fail table. Needs no broker, no sink and no weir.yaml.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ruleErrorAt } from '../config/rule-error-at.js';
import { parseYaml, type YamlSource } from '../config/yaml-source.js';
import { errorText } from '../errors.js';
import { compileJsonata, compileSql } from '../rules/index.js';
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
      let src: YamlSource;
      let doc: Record<string, unknown>;
      try {
        src = parseYaml(name, readFileSync(file, 'utf8'));
        if (src.errors.length) throw new Error(src.errors[0]!.message);
        doc = (src.doc.toJS() ?? {}) as Record<string, unknown>;
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
      // A rule that does not compile fails every test for one reason, said once, at the place in
      // the file weir check names.
      const notCompiled = compileError(src, doc);
      if (notCompiled) {
        process.stdout.write(`FAIL  ${notCompiled}\n      ${tests.length} test(s) not run: the rule does not compile\n`);
        failed += tests.length;
        continue;
      }
      const spec: RuleTestSpec = {
        sql: doc.sql as string | undefined,
        jsonata: doc.jsonata as string | undefined,
        filters: doc.from as string[] | undefined,
        tests,
      };
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

/** The rule's compile error, as `file:line:col: sql: reason` and its caret lines, if it has one. */
function compileError(src: YamlSource, doc: Record<string, unknown>): string | undefined {
  const key = doc.sql !== undefined ? 'sql' : doc.jsonata !== undefined ? 'jsonata' : undefined;
  if (!key) return undefined;
  try {
    if (key === 'sql') compileSql(String(doc.sql));
    else compileJsonata(String(doc.jsonata), (doc.from ?? []) as string[]);
    return undefined;
  } catch (err) {
    return ruleErrorAt(src, key, err).message;
  }
}
