// weir test: run the `tests:` of rule files (event → expected outputs, no match, or error) and
// print a pass/fail table. Needs no broker and no sink. Each file is read as `weir check` reads it
// (its schema, so a misspelt `expect:` key fails), and each test's event is made as `weir run`
// makes a received message's, with weir.yaml's broker settings when there is one (test-event.ts).
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { ConfigErrors, functionsWith, readEventSettings, readSchemaSettings, ruleFilesIn } from '../config/load.js';
import type { FunctionRegistry } from '../rules/functions/registry.js';
import { ruleErrorAt } from '../config/rule-error-at.js';
import { BrokerSpec, RuleFileSpec, type RuleFileConfig } from '../config/schema.js';
import { validatePart } from '../config/validate.js';
import { parseYaml, type YamlSource } from '../config/yaml-source.js';
import { errorText } from '../errors.js';
import { compileJsonata, compileSql } from '../rules/index.js';
import { runRuleTests, type EventMaker, type RuleTestSpec } from '../rules/tools/rule-tests.js';
import { Value } from '@sinclair/typebox/value';
import { CONFIG_OPTION, parse } from './args.js';
import type { Command } from './command.js';
import { junitXml, type JunitCase, type JunitSuite } from './junit.js';
import { testEventMaker } from '../core/app/test-event.js';

const HELP = `usage: weir test [--config FILE] [--junit FILE] [PATH ...]

Runs the tests: of each rule file (default: ./rules, with its subfolders). A PATH is a rule file or
a directory of them. Each test's event is made as weir run makes a received message's, with the
broker settings of weir.yaml (publisher_clientid gives clientid) when there is one. Prints one line
per test and exits 1 if any test fails or a file cannot be read.

  -c, --config FILE   weir.yaml whose broker settings make the events and whose schemas: the rules
                      decode with (default: ./weir.yaml when it exists; without one, the defaults:
                      clientid only as a test's event gives it, no schemas)

A test's binary payload: {$hex: ...}, {$base64: ...}, or {$file: path} (relative to the rule file).
      --junit FILE    also write the results as a JUnit XML report, for CI systems: one testsuite
                      per rule file, one testcase per test, each failure with its message
`;

export const testCommand: Command = {
  summary: "run the rule files' tests: offline",
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, junit: { type: 'string' } }, HELP, true);
    if ('exit' in p) return p.exit;
    const eventOf = eventMaker(p.values.config);
    if (!eventOf) return 1;
    const registry = schemaFunctions(p.values.config);
    if (!registry) return 1;
    const paths = p.positionals.length ? p.positionals : ['rules'];
    const suites: JunitSuite[] = [];
    for (const x of paths) {
      let files: string[];
      try {
        files = statSync(x).isDirectory() ? ruleFilesIn(x) : [x];
      } catch (err) {
        process.stderr.write(`error: ${x}: ${errorText(err)}\n`);
        suites.push({ name: x, cases: [{ name: x, error: `cannot read: ${errorText(err)}` }], seconds: 0 });
        continue;
      }
      for (const file of files) suites.push(await testFile(file, eventOf, registry));
    }
    const cases = suites.flatMap((s) => s.cases);
    const passed = cases.filter((c) => c.failure === undefined && c.error === undefined).length;
    const failed = cases.length - passed;
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    if (p.values.junit !== undefined) {
      try {
        mkdirSync(dirname(p.values.junit), { recursive: true });
        writeFileSync(p.values.junit, junitXml(suites));
      } catch (err) {
        process.stderr.write(`error: --junit ${p.values.junit}: ${errorText(err)}\n`);
        return 1;
      }
    }
    return failed ? 1 : 0;
  },
};

/** Runs one rule file's tests, printing a line per test; its results for the JUnit report. */
async function testFile(file: string, eventOf: EventMaker, registry: FunctionRegistry): Promise<JunitSuite> {
  const started = performance.now();
  const name = relative(process.cwd(), file);
  const suite = (cases: JunitCase[]): JunitSuite => ({ name, cases, seconds: (performance.now() - started) / 1000 });
  const read = readRuleFile(name, file);
  if ('problem' in read) {
    process.stdout.write(`FAIL  ${read.problem}\n`);
    return suite([{ name, error: read.problem }]);
  }
  const { src, rule } = read;
  const tests = rule.tests ?? [];
  if (!tests.length) {
    process.stdout.write(`----  ${name}: no tests\n`);
    return suite([]);
  }
  // A rule that does not compile fails every test for one reason, said once, at the place in
  // the file weir check names.
  const notCompiled = compileError(src, rule, registry);
  if (notCompiled) {
    process.stdout.write(`FAIL  ${notCompiled}\n      ${tests.length} test(s) not run: the rule does not compile\n`);
    return suite(tests.map((t, i) => ({ name: `#${i + 1} ${t.name ?? `test ${i + 1}`}`, error: notCompiled })));
  }
  let withFiles: RuleTestSpec['tests'];
  try {
    withFiles = tests.map((t) => ({ ...t, event: payloadFromFile(t.event, file) }));
  } catch (err) {
    const problem = `${name}: ${errorText(err)}`;
    process.stdout.write(`FAIL  ${problem}\n`);
    return suite([{ name, error: problem }]);
  }
  const spec: RuleTestSpec = { sql: rule.sql, jsonata: rule.jsonata, filters: rule.from, tests: withFiles };
  const cases: JunitCase[] = [];
  for (const r of await runRuleTests(spec, rule.id, eventOf, registry)) {
    process.stdout.write(`${r.pass ? 'PASS' : 'FAIL'}  ${name} #${r.index + 1} ${r.name}${r.pass ? '' : `\n      ${r.message}`}\n`);
    cases.push(r.pass ? { name: `#${r.index + 1} ${r.name}` } : { name: `#${r.index + 1} ${r.name}`, failure: r.message });
  }
  return suite(cases);
}

/** An event whose payload is {$file: path}: the file's bytes (as {$base64}), the path relative to the rule file. */
function payloadFromFile(event: Record<string, unknown>, ruleFile: string): Record<string, unknown> {
  const p = event.payload as { $file?: unknown } | undefined;
  if (p === null || typeof p !== 'object' || typeof p.$file !== 'string' || Object.keys(p).length !== 1) return event;
  const path = resolve(dirname(ruleFile), p.$file);
  return { ...event, payload: { $base64: readFileSync(path).toString('base64') } };
}

/** The schema functions over weir.yaml's schemas (the same file as the events' settings), or none. */
function schemaFunctions(config: string | undefined): FunctionRegistry | undefined {
  const file = config ?? (existsSync('weir.yaml') ? 'weir.yaml' : undefined);
  try {
    return functionsWith(readSchemaSettings(file));
  } catch (err) {
    const lines = err instanceof ConfigErrors ? err.errors.map((e) => e.message) : [errorText(err)];
    for (const l of lines) process.stderr.write(`error: ${l}\n`);
    return undefined;
  }
}

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
function compileError(src: YamlSource, rule: RuleFileConfig, registry: FunctionRegistry): string | undefined {
  const key = rule.sql !== undefined ? 'sql' : rule.jsonata !== undefined ? 'jsonata' : undefined;
  if (!key) return undefined;
  try {
    if (key === 'sql') compileSql(String(rule.sql), registry);
    else compileJsonata(String(rule.jsonata), rule.from ?? []);
    return undefined;
  } catch (err) {
    return ruleErrorAt(src, key, err).message;
  }
}
