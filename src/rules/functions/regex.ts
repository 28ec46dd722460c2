// Regular expressions (regex_match, regex_replace, regex_extract). EMQX uses PCRE; JavaScript's
// RegExp reads the common subset the same way. Leading inline options such as (?i) are turned
// into flags; compiled patterns are cached (bounded).
import { RuleEvalError } from '../errors.js';
import { checkSize, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

const cache = new Map<string, RegExp>();

function compile(pattern: string, global: boolean): RegExp {
  const key = `${global ? 'g' : '-'}${pattern}`;
  let re = cache.get(key);
  if (re) {
    re.lastIndex = 0;
    return re;
  }
  let src = pattern;
  let flags = global ? 'gu' : 'u';
  const inline = /^\(\?([imsx]+)\)/.exec(src);
  if (inline) {
    src = src.slice(inline[0].length);
    for (const f of inline[1] as string) if (f !== 'x' && !flags.includes(f)) flags += f;
  }
  try {
    re = new RegExp(src, flags);
  } catch {
    try {
      re = new RegExp(src, flags.replace('u', ''));
    } catch (err) {
      throw new RuleEvalError('rule.bad_regex', `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
  }
  if (cache.size >= 500) cache.clear();
  cache.set(key, re);
  return re;
}

/** Erlang re:replace replacement text: & is the match, \N and \g{N} are groups, \& and \\ literal. */
function expand(rep: string, m: RegExpExecArray | string[]): string {
  let out = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i] as string;
    if (c === '&') {
      out += m[0] ?? '';
      continue;
    }
    if (c === '\\' && i + 1 < rep.length) {
      const rest = rep.slice(i + 1);
      const g = /^g\{(\d+)\}|^(\d+)/.exec(rest);
      if (g) {
        out += m[Number(g[1] ?? g[2])] ?? '';
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

export const REGEX_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'string',
    'regex_match(string, string): bool',
    'Whether the regular expression matches anywhere in the string.',
    (s: unknown, re: unknown) => compile(needStr('regex_match', re), false).test(needStr('regex_match', s)),
    {
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
    (s: unknown, re: unknown, rep: unknown) => {
      const str = needStr('regex_replace', s);
      const r = needStr('regex_replace', rep);
      let out = '';
      let last = 0;
      for (const m of str.matchAll(compile(needStr('regex_replace', re), true))) {
        out += str.slice(last, m.index) + expand(r, m);
        last = m.index + m[0].length;
        checkSize('regex_replace', out.length);
      }
      out += str.slice(last);
      checkSize('regex_replace', out.length);
      return out;
    },
    {
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
    (s: unknown, re: unknown) => {
      const m = compile(needStr('regex_extract', re), false).exec(needStr('regex_extract', s));
      return m ? m.slice(1).map((g) => g ?? '') : [];
    },
    {
      examples: [
        { call: "regex_extract('Date: 2021-05-20', '(\\d{4})-(\\d{2})-(\\d{2})')", result: ['2021', '05', '20'] },
        { call: "regex_extract('No numbers', '(\\d+)')", result: [] },
      ],
    },
  ),
];
