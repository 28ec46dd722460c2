// `weir test --junit FILE`: the results as a JUnit XML report, the format CI systems read (GitLab,
// Jenkins, GitHub's test reporters). One <testsuite> per rule file, one <testcase> per test; a
// failed test has a <failure> with the message (first line in `message`, all of it as the text);
// a file that cannot be read, or a rule that does not compile, is an <error> of its file:
//
//   <testsuites name="weir test" tests="3" failures="1" errors="0" time="0.012">
//     <testsuite name="rules/telemetry.yaml" tests="2" failures="1" errors="0" skipped="0" time="0.004">
//       <testcase classname="rules/telemetry.yaml" name="#1 a reading is stored"/>
//       <testcase classname="rules/telemetry.yaml" name="#2 …"><failure message="…">…</failure></testcase>
//     </testsuite>
//   </testsuites>

export interface JunitCase {
  readonly name: string;
  /** Absent: passed. */
  readonly failure?: string;
  /** The test could not be run (its rule does not compile). */
  readonly error?: string;
}

export interface JunitSuite {
  /** The rule file, relative to the working directory. */
  readonly name: string;
  readonly cases: readonly JunitCase[];
  readonly seconds: number;
}

export function junitXml(suites: readonly JunitSuite[]): string {
  const count = (cs: readonly JunitCase[]) => ({
    tests: cs.length,
    failures: cs.filter((c) => c.failure !== undefined).length,
    errors: cs.filter((c) => c.error !== undefined).length,
  });
  const all = count(suites.flatMap((s) => s.cases));
  const seconds = suites.reduce((a, s) => a + s.seconds, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="weir test" tests="${all.tests}" failures="${all.failures}" errors="${all.errors}" time="${seconds.toFixed(3)}">`,
  ];
  for (const s of suites) {
    const n = count(s.cases);
    out.push(
      `  <testsuite name="${attr(s.name)}" tests="${n.tests}" failures="${n.failures}" errors="${n.errors}" skipped="0" time="${s.seconds.toFixed(3)}">`,
    );
    for (const c of s.cases) {
      const open = `    <testcase classname="${attr(s.name)}" name="${attr(c.name)}"`;
      const problem = c.failure !== undefined ? ['failure', c.failure] : c.error !== undefined ? ['error', c.error] : undefined;
      if (!problem) out.push(`${open}/>`);
      else out.push(`${open}><${problem[0]} message="${attr(problem[1]!.split('\n', 1)[0]!)}">${text(problem[1]!)}</${problem[0]}></testcase>`);
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

/** Characters XML 1.0 cannot hold at all (most C0 controls, lone surrogates, U+FFFE/FFFF): dropped. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function text(s: string): string {
  return s.replace(NOT_XML, '').replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** An attribute value: also its quotes, and its line breaks and tabs (an attribute's whitespace is normalised otherwise). */
function attr(s: string): string {
  return text(s).replaceAll('"', '&quot;').replaceAll('\n', '&#10;').replaceAll('\r', '&#13;').replaceAll('\t', '&#9;');
}
