// Regular expressions (regex_match, regex_replace, regex_extract). EMQX uses PCRE; weir runs them
// on RE2 (linear-regex.ts), in time linear in the input, which reads PCRE's syntax minus what
// needs backtracking (backreferences, lookaround): those are refused with rule.bad_regex, when the
// rule is compiled if the pattern is a literal. Inline options ((?i), (?m), (?s)) are RE2's own.
import { admitInput, chargeMatch, compileRegex, nextStart } from './linear-regex.js';
import { checkSize, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

/** Erlang re:replace replacement text: & is the match, \N and \g{N} are groups, \& and \\ literal. */
function expand(rep: string, group: (n: number) => string): string {
  let out = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i] as string;
    if (c === '&') {
      out += group(0);
      continue;
    }
    if (c === '\\' && i + 1 < rep.length) {
      const rest = rep.slice(i + 1);
      const g = /^g\{(\d+)\}|^(\d+)/.exec(rest);
      if (g) {
        out += group(Number(g[1] ?? g[2]));
        i += g[0].length;
        continue;
      }
      out += rest[0];
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

/** A pattern argument: a literal one is checked when the rule is compiled. */
const checkPattern = (fn: string) => (pattern: unknown) => {
  if (typeof pattern === 'string') compileRegex(fn, pattern);
};

export const REGEX_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'string',
    'regex_match(string, string): bool',
    'Whether the regular expression matches anywhere in the string.',
    (s: unknown, pattern: unknown) => {
      const re = compileRegex('regex_match', needStr('regex_match', pattern));
      const str = needStr('regex_match', s);
      admitInput('regex_match', re, str);
      return re.re.test(str);
    },
    {
      literalArgs: { 1: checkPattern('regex_match') },
      examples: [
        { call: "regex_match('abc123', '[0-9]+$')", result: true },
        { call: "regex_match('abc', '^\\d+$')", result: false },
      ],
    },
  ),
  ...def(
    'string',
    'regex_replace(string, string, string): string',
    'Replace every match; & is the match and \\1 a group in the replacement.',
    (s: unknown, pattern: unknown, rep: unknown) => {
      const str = needStr('regex_replace', s);
      const r = needStr('regex_replace', rep);
      const re = compileRegex('regex_replace', needStr('regex_replace', pattern));
      let work = admitInput('regex_replace', re, str);
      const m = re.re.matcher(str);
      const groups = m.groupCount();
      const group = (n: number): string => (n <= groups ? (m.group(n) ?? '') : '');
      let out = '';
      let last = 0;
      let matches = 0;
      for (let from = 0; from <= str.length && m.find(from); from = nextStart(str, m.start(), m.end())) {
        work = chargeMatch('regex_replace', work, ++matches);
        out += str.slice(last, m.start()) + expand(r, group);
        last = m.end();
        checkSize('regex_replace', out.length);
      }
      out += str.slice(last);
      checkSize('regex_replace', out.length);
      return out;
    },
    {
      literalArgs: { 1: checkPattern('regex_replace') },
      examples: [
        { call: "regex_replace('ab..cd', '\\.+', '-')", result: 'ab-cd' },
        { call: "regex_replace('a1b2', '([0-9])', '<\\1>')", result: 'a<1>b<2>' },
      ],
    },
  ),
  ...def(
    'string',
    'regex_extract(string, string): array',
    'The groups captured by the first match (not the whole match), or [].',
    (s: unknown, pattern: unknown) => {
      const re = compileRegex('regex_extract', needStr('regex_extract', pattern));
      const str = needStr('regex_extract', s);
      admitInput('regex_extract', re, str);
      const m = re.re.matcher(str);
      if (!m.find()) return [];
      const out: string[] = [];
      for (let i = 1; i <= m.groupCount(); i++) out.push(m.group(i) ?? '');
      return out;
    },
    {
      literalArgs: { 1: checkPattern('regex_extract') },
      examples: [
        { call: "regex_extract('Date: 2021-05-20', '(\\d{4})-(\\d{2})-(\\d{2})')", result: ['2021', '05', '20'] },
        { call: "regex_extract('No numbers', '(\\d+)')", result: [] },
      ],
    },
  ),
];
