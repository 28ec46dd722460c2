// `weir test --junit FILE` (issue 29): the results as JUnit XML for CI systems. Run as a user runs
// it, on rule files with a passing test, a failing one whose name and message hold `<`, `&` and
// `"`, a rule that does not compile and a file without tests; the report is read back by the small
// XML reader below (well-formedness, entities), then its structure, counts and messages checked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

interface El {
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

const ENTITY = /&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
function decode(s: string): string {
  assert.ok(!/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(s), `a bare & in ${JSON.stringify(s)}`);
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return s.replace(ENTITY, (_, e: string) => named[e] ?? String.fromCodePoint(Number(e.startsWith('#x') ? `0x${e.slice(2)}` : e.slice(1))));
}

/** A strict reader for the XML a report uses: one root, elements, attributes, text, entities. */
function readXml(xml: string): El {
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  assert.ok(decl, 'the XML declaration first');
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  token.lastIndex = decl[0].length;
  const stack: El[] = [];
  let root: El | undefined;
  while (token.lastIndex < xml.length) {
    const at = token.lastIndex;
    const m = token.exec(xml);
    if (!m) assert.fail(`not well-formed at ${at}: ${JSON.stringify(xml.slice(at, at + 60))}`);
    if (m[5] !== undefined) {
      if (stack.length) stack.at(-1)!.text += decode(m[5]);
      else assert.equal(m[5].trim(), '', 'text outside the root');
      continue;
    }
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      const top = stack.pop();
      assert.equal(top?.name, name, `</${name}> closes <${top?.name}>`);
      if (!stack.length) root = top;
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText!.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) {
      assert.ok(!(a[1]! in attrs), `attribute ${a[1]} twice`);
      attrs[a[1]!] = decode(a[2]!);
    }
    const el: El = { name: name!, attrs, children: [], text: '' };
    if (stack.length) stack.at(-1)!.children.push(el);
    else assert.equal(root, undefined, 'a second root element');
    if (!selfClose) stack.push(el);
    else if (!stack.length) root = el;
  }
  assert.equal(stack.length, 0, 'unclosed elements');
  return root!;
}

const RULE = (tests: string) => `
id: strings
sql: SELECT payload.s AS s FROM "t/#"
actions:
  - { sink: db, table: t, columns: { s: '\${s}' } }
tests:
${tests}`;

const FILES = {
  'a.yaml': RULE(`  - name: a string passes through
    event: { topic: t/1, payload: { s: x } }
    expect: { outputs: [{ s: x }] }
  - name: 'quotes "q" & <tags>'
    event: { topic: t/1, payload: { s: 'a<b&c"d' } }
    expect: { outputs: [{ s: other }] }
`),
  'sub/b.yaml': RULE(`  - event: { topic: t/2, payload: { s: y } }
    expect: { outputs: [{ s: y }] }
`).replace('id: strings', 'id: strings_b'),
  'broken.yaml': RULE(`  - event: { topic: t/3, payload: { s: z } }
    expect: { outputs: [{ s: z }] }
`)
    .replace('id: strings', 'id: broken')
    .replace('SELECT payload.s AS s FROM', 'SELECT FROM FROM'),
  'none.yaml': 'id: none\nsql: SELECT * FROM "n/#"\nactions:\n  - { sink: db, table: n }\n',
};

test('weir test --junit writes one testsuite per rule file, one testcase per test, failures with their message, escaped', async () => {
  const dir = writeWeirFiles(
    { config: 'broker: { url: "mqtt://127.0.0.1:1" }\nsinks:\n  db: { type: postgres, url: "postgres://127.0.0.1:1/x" }\n', rules: FILES },
    0,
    tempDir('weir-junit'),
  );
  const report = join(dir, 'reports', 'weir-test.xml');
  const r = await runCli(['test', '-c', join(dir, 'weir.yaml'), '--junit', report, join(dir, 'rules')]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /^2 passed, 2 failed$/m);

  const root = readXml(readFileSync(report, 'utf8'));
  assert.equal(root.name, 'testsuites');
  assert.deepEqual({ tests: root.attrs.tests, failures: root.attrs.failures, errors: root.attrs.errors }, { tests: '4', failures: '1', errors: '1' });
  const suites = Object.fromEntries(root.children.map((s) => [s.attrs.name!.replace(/^.*rules\//, ''), s]));
  assert.deepEqual(Object.keys(suites).sort(), ['a.yaml', 'broken.yaml', 'none.yaml', 'sub/b.yaml']);
  for (const s of root.children) {
    assert.equal(s.name, 'testsuite');
    assert.equal(Number(s.attrs.tests), s.children.length, `${s.attrs.name}: tests= counts its testcases`);
    assert.match(s.attrs.time!, /^\d+\.\d{3}$/);
    for (const c of s.children) assert.equal(c.attrs.classname, s.attrs.name);
  }

  const a = suites['a.yaml']!;
  assert.deepEqual([a.attrs.tests, a.attrs.failures, a.attrs.errors], ['2', '1', '0']);
  const [pass, fail] = a.children;
  assert.deepEqual([pass!.attrs.name, pass!.children], ['#1 a string passes through', []]);
  assert.equal(fail!.attrs.name, '#2 quotes "q" & <tags>', 'the name, its <&" intact');
  const failure = fail!.children[0]!;
  assert.equal(failure.name, 'failure');
  assert.equal(failure.attrs.message, 'at $[0].s: expected "other", got "a<b&c\\"d"', 'the message, its <&" intact');
  assert.equal(failure.text, failure.attrs.message);
  assert.ok(r.stdout.includes(failure.attrs.message!), 'the message weir test printed');

  const broken = suites['broken.yaml']!;
  assert.deepEqual([broken.attrs.tests, broken.attrs.failures, broken.attrs.errors], ['1', '0', '1']);
  const error = broken.children[0]!.children[0]!;
  assert.equal(error.name, 'error');
  assert.match(error.attrs.message!, /broken\.yaml:\d+:\d+: sql: /, 'where the rule does not compile');
  assert.match(error.text, /\n/, 'the caret lines below it, in the text');

  assert.deepEqual([suites['sub/b.yaml']!.attrs.tests, suites['sub/b.yaml']!.attrs.failures], ['1', '0']);
  assert.deepEqual(suites['none.yaml']!.children, [], 'a file without tests: an empty testsuite');
});

test('weir test --junit: a passing run writes its report and exits 0; a report that cannot be written is exit 1', async () => {
  const dir = writeWeirFiles({ config: 'broker: { url: "mqtt://127.0.0.1:1" }\n', rules: { 'b.yaml': FILES['sub/b.yaml'] } }, 0, tempDir('weir-junit'));
  const report = join(dir, 'ok.xml');
  const ok = await runCli(['test', '-c', join(dir, 'weir.yaml'), '--junit', report, join(dir, 'rules')]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  const root = readXml(readFileSync(report, 'utf8'));
  assert.deepEqual([root.attrs.tests, root.attrs.failures, root.attrs.errors], ['1', '0', '0']);
  const bad = await runCli(['test', '-c', join(dir, 'weir.yaml'), '--junit', join(dir, 'weir.yaml', 'x.xml'), join(dir, 'rules')]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: --junit .*x\.xml: /m);
});
