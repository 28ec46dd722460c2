// weir test: run the `tests:` of rule files (event → expected outputs, no match, or error) and
// print a pass/fail table. Needs no broker and no sink. Each file is read as `weir check` reads it
// (its schema, so a misspelt `expect:` key fails), and each test's event is made as `weir run`
// makes a received message's, with weir.yaml's broker settings when there is one (test-event.ts).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { ConfigErrors, readEventSettings, ruleFilesIn } from '../config/load.js';
import { ruleErrorAt } from '../config/rule-error-at.js';
import { BrokerSpec, RuleFileSpec, type RuleFileConfig } from '../config/schema.js';
import { validatePart } from '../config/validate.js';
import { parseYaml, type YamlSource } from '../config/yaml-source.js';
import { errorText } from '../errors.js';
import { compileJsonata, compileSql } from '../rules/index.js';
import { runRuleTests, type EventMaker, type RuleTestSpec } from '../rules/rule-tests.js';
import { Value } from '@sinclair/typebox/value';
import { CONFIG_OPTION, parse } from './args.js';
import type { Command } from './commands.js';
import { testEventMaker } from './test-event.js';

const HELP = `usage: weir test [--config FILE] [PATH ...]

Runs the tests: of each rule file (default: ./rules, with its subfolders). A PATH is a rule file or
a directory of them. Each test's event is made as weir run makes a received message's, with the
broker settings of weir.yaml (publisher_clientid gives clientid) when there is one. Prints one line
per test and exits 1 if any test fails or a file cannot be read.

  -c, --config FILE   weir.yaml whose broker settings make the events (default: ./weir.yaml when it
                      exists; without one, the defaults: clientid only as a test's event gives it)
`;

export const testCommand: Command = {
  summary: "run the rule files' tests: offline",
  async run(args) {
    const p = parse(args, CONFIG_OPTION, HELP, true);
    if ('exit' in p) return p.exit;
    const eventOf = eventMaker(p.values.config);
    if (!eventOf) return 1;
    const paths = p.positionals.length ? p.positionals : ['rules'];
    let passed = 0;
    let failed = 0;
    for (const file of paths.flatMap((x) => {
      try {
        return statSync(x).isDirectory() ? ruleFilesIn(x) : [x];
      } catch (err) {
        process.stderr.write(`error: ${x}: ${errorText(err)}\n`);
        failed++;
        return [];
      }
    })) {
      const name = relative(process.cwd(), file);
      const read = readRuleFile(name, file);
      if ('problem' in read) {
        process.stdout.write(`FAIL  ${read.problem}\n`);
        failed++;
        continue;
      }
      const { src, rule } = read;
      const tests = rule.tests ?? [];
      if (!tests.length) {
        process.stdout.write(`----  ${name}: no tests\n`);
        continue;
      }
      // A rule that does not compile fails every test for one reason, said once, at the place in
      // the file weir check names.
      const notCompiled = compileError(src, rule);
      if (notCompiled) {
        process.stdout.write(`FAIL  ${notCompiled}\n      ${tests.length} test(s) not run: the rule does not compile\n`);
        failed += tests.length;
        continue;
      }
      const spec: RuleTestSpec = { sql: rule.sql, jsonata: rule.jsonata, filters: rule.from, tests };
      for (const r of await runRuleTests(spec, rule.id, eventOf)) {
        if (r.pass) passed++;
        else failed++;
        process.stdout.write(`${r.pass ? 'PASS' : 'FAIL'}  ${name} #${r.index + 1} ${r.name}${r.pass ? '' : `\n      ${r.message}`}\n`);
      }
    }
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    return failed ? 1 : 0;
  },
};

/** The event maker of weir.yaml's broker settings, or of the defaults without a weir.yaml. */
function eventMaker(config: string | undefined): EventMaker | undefined {
  const file = config ?? (existsSync('weir.yaml') ? 'weir.yaml' : undefined);
  if (file === undefined) return testEventMaker(Value.Default(BrokerSpec, {}) as never, 'weir@localhost');
  try {
    const { broker, node } = readEventSettings(file);
    return testEventMaker(broker, node);
  } catch (err) {
    const lines = err instanceof ConfigErrors ? err.errors.map((e) => e.message) : [errorText(err)];
    for (const l of lines) process.stderr.write(`error: ${l}\n`);
    return undefined;
  }
}

/** A rule file read and checked against the rule file schema (its tests' shape included). */
function readRuleFile(name: string, file: string): { src: YamlSource; rule: RuleFileConfig } | { problem: string } {
  let src: YamlSource;
  try {
    src = parseYaml(name, readFileSync(file, 'utf8'));
  } catch (err) {
    return { problem: `${name}: cannot read: ${errorText(err)}` };
  }
  if (src.errors.length) return { problem: `${name}: cannot read: ${src.errors[0]!.message}` };
  const { value, errors } = validatePart<RuleFileConfig>(RuleFileSpec, src.doc.toJS(), src, []);
  if (errors.length) return { problem: errors.map((e) => e.message).join('\n      ') };
  return { src, rule: value };
}

/** The rule's compile error, as `file:line:col: sql: reason` and its caret lines, if it has one. */
function compileError(src: YamlSource, rule: RuleFileConfig): string | undefined {
  const key = rule.sql !== undefined ? 'sql' : rule.jsonata !== undefined ? 'jsonata' : undefined;
  if (!key) return undefined;
  try {
    if (key === 'sql') compileSql(String(rule.sql));
    else compileJsonata(String(rule.jsonata), rule.from ?? []);
    return undefined;
  } catch (err) {
    return ruleErrorAt(src, key, err).message;
  }
}
