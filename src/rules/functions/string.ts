// String functions (EMQX's string family, emqx_variform_bif). Positions count characters (code
// points); substr is 0-based as EMQX's string:slice, whatever older docs say.
import { isNumber } from '../values/floats.js';
import { RuleEvalError } from '../errors.js';
import { toStr } from '../values/to-str.js';
import { checkSize, needInt, needList, needOption, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';
import { sprintf, unescapeText } from './string-format.js';

const s1 =
  (name: string, f: (s: string) => unknown) =>
  (v: unknown): unknown =>
    f(needStr(name, v));

function chars(s: string): string[] {
  return Array.from(s);
}

function splitAll(s: string, sep: string): string[] {
  if (sep === '') return [s];
  return s.split(sep);
}

function split(s: unknown, p: unknown, option?: unknown): string[] {
  const str = needStr('split', s);
  const sep = needStr('split', p);
  const opt = option === undefined ? 'all' : needOption('split', option, ['notrim', 'leading', 'leading_notrim', 'trailing', 'trailing_notrim'] as const);
  let parts: string[];
  if (opt === 'all' || opt === 'notrim') parts = splitAll(str, sep);
  else {
    const at = sep === '' ? -1 : opt.startsWith('leading') ? str.indexOf(sep) : str.lastIndexOf(sep);
    parts = at < 0 ? [str] : [str.slice(0, at), str.slice(at + sep.length)];
  }
  return opt.endsWith('notrim') ? parts : parts.filter((x) => x !== '');
}

function tokens(s: unknown, seps: unknown, nocrlf?: unknown): string[] {
  const str = needStr('tokens', s);
  let set = needStr('tokens', seps);
  if (nocrlf !== undefined) {
    needOption('tokens', nocrlf, ['nocrlf'] as const);
    set += '\r\n';
  }
  const sepChars = new Set(chars(set));
  const out: string[] = [];
  let cur = '';
  for (const c of str) {
    if (sepChars.has(c)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

function pad(s: unknown, len: unknown, pos?: unknown, ch?: unknown): string {
  const str = needStr('pad', s);
  const n = needInt('pad', len);
  const where = pos === undefined ? 'trailing' : needOption('pad', pos, ['trailing', 'leading', 'both'] as const);
  const c = ch === undefined ? ' ' : needStr('pad', ch);
  const missing = n - chars(str).length;
  if (missing <= 0 || c === '') return str;
  checkSize('pad', missing * c.length + str.length);
  if (where === 'trailing') return str + c.repeat(missing);
  if (where === 'leading') return c.repeat(missing) + str;
  const left = Math.floor(missing / 2);
  return c.repeat(left) + str + c.repeat(missing - left);
}

function replace(s: unknown, p: unknown, r: unknown, where?: unknown): string {
  const str = needStr('replace', s);
  const pat = needStr('replace', p);
  const rep = needStr('replace', r);
  const opt = where === undefined ? 'all' : needOption('replace', where, ['all', 'leading', 'trailing'] as const);
  if (pat === '') return str;
  if (opt === 'all') {
    const parts = str.split(pat);
    checkSize('replace', str.length + (parts.length - 1) * rep.length);
    return parts.join(rep);
  }
  const at = opt === 'leading' ? str.indexOf(pat) : str.lastIndexOf(pat);
  return at < 0 ? str : str.slice(0, at) + rep + str.slice(at + pat.length);
}

function find(s: unknown, p: unknown, where?: unknown): string {
  const str = needStr('find', s);
  const pat = needStr('find', p);
  const opt = where === undefined ? 'leading' : needOption('find', where, ['leading', 'trailing'] as const);
  const at = opt === 'leading' ? str.indexOf(pat) : str.lastIndexOf(pat);
  return at < 0 ? '' : str.slice(at);
}

function substr(s: unknown, start: unknown, len?: unknown): string {
  const cs = chars(needStr('substr', s));
  const b = needInt('substr', start);
  if (b < 0) throw new RuleEvalError('rule.bad_argument', 'substr: the start must not be negative');
  if (len === undefined) return cs.slice(b).join('');
  const n = needInt('substr', len);
  if (n < 0) throw new RuleEvalError('rule.bad_argument', 'substr: the length must not be negative');
  return cs.slice(b, b + n).join('');
}

/** string:trim(S, trailing, Chars): drop trailing characters that are any of `set`. */
function rtrim(v: unknown, set?: unknown): string {
  const s = needStr('rtrim', v);
  if (set === undefined) return s.trimEnd();
  const drop = new Set(chars(needStr('rtrim', set)));
  const cs = chars(s);
  let end = cs.length;
  while (end > 0 && drop.has(cs[end - 1] as string)) end--;
  return cs.slice(0, end).join('');
}

function concatList(list: unknown[]): string {
  let out = '';
  for (const v of list) out += toStr(v);
  checkSize('concat', out.length);
  return out;
}

function joinToString(a: unknown, b?: unknown): string {
  const [sep, list] = b === undefined ? [', ', needList('join_to_string', a)] : [needStr('join_to_string', a), needList('join_to_string', b)];
  return list.map(toStr).join(sep);
}

/** SQL literal quoting as EMQX's quote_sql: strings single-quoted with quotes doubled. */
function sqlValue(v: unknown): string {
  if (isNumber(v)) return toStr(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null || v === undefined) return 'NULL';
  const s = Array.isArray(v) ? JSON.stringify(v) : toStr(v);
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export const STRING_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'string',
    'lower(string): string',
    'Lower case.',
    s1('lower', (s) => s.toLowerCase()),
    { examples: [{ call: "lower('AbC')", result: 'abc' }] },
  ),
  ...def(
    'string',
    'upper(string): string',
    'Upper case.',
    s1('upper', (s) => s.toUpperCase()),
    {
      examples: [
        { call: "upper('AbC')", result: 'ABC' },
        { call: 'upper(payload.nope)', error: true },
      ],
    },
  ),
  ...def(
    'string',
    'trim(string): string',
    'Remove leading and trailing white space.',
    s1('trim', (s) => s.trim()),
    { examples: [{ call: "trim(' hello  ')", result: 'hello' }] },
  ),
  ...def(
    'string',
    'ltrim(string): string',
    'Remove leading white space.',
    s1('ltrim', (s) => s.trimStart()),
    { examples: [{ call: "ltrim(' hello  ')", result: 'hello  ' }] },
  ),
  ...def('string', 'rtrim(string, string?): string', 'Remove trailing white space, or any of the given characters.', rtrim, {
    examples: [
      { call: "rtrim(' hello  ')", result: ' hello' },
      { call: "rtrim('hello!!?', '!?')", result: 'hello' },
    ],
  }),
  ...def(
    'string',
    'rm_prefix(string, string): string',
    'The string without the prefix, or as it is when it does not start with it.',
    (v: unknown, p: unknown) => {
      const s = needStr('rm_prefix', v);
      const prefix = needStr('rm_prefix', p);
      return s.startsWith(prefix) ? s.slice(prefix.length) : s;
    },
    {
      examples: [
        { call: "rm_prefix('atom', 'a')", result: 'tom' },
        { call: "rm_prefix('atom', 'x')", result: 'atom' },
      ],
    },
  ),
  ...def(
    'string',
    'reverse(string): string',
    'The characters in reverse order.',
    s1('reverse', (s) => chars(s).reverse().join('')),
    { examples: [{ call: "reverse('hello')", result: 'olleh' }] },
  ),
  ...def(
    'string',
    'strlen(string): int',
    'Number of characters.',
    s1('strlen', (s) => chars(s).length),
    {
      examples: [
        { call: "strlen('hello')", result: 5 },
        { call: "strlen('héllo')", result: 5 },
      ],
    },
  ),
  ...def('string', 'substr(string, int, int?): string', 'Substring from a 0-based start, to the end or of the given length.', substr, {
    examples: [
      { call: "substr('abcdef', 2)", result: 'cdef' },
      { call: "substr('abcdef', 2, 3)", result: 'cde' },
    ],
  }),
  ...def(
    'string',
    'split(string, string, string?): array',
    "Split on a separator, dropping empty parts; option 'leading'/'trailing' splits once, '…_notrim' and 'notrim' keep empty parts.",
    split,
    {
      examples: [
        { call: "split('a/b/ c', '/')", result: ['a', 'b', ' c'] },
        { call: "split('a/b/ c', '/', 'leading')", result: ['a', 'b/ c'] },
        { call: "split('a/b/ c', '/', 'trailing')", result: ['a/b', ' c'] },
        { call: "split('/a//b', '/', 'notrim')", result: ['', 'a', '', 'b'] },
      ],
    },
  ),
  ...def(
    'string',
    'tokens(string, string, string?): array',
    "Split on any of the separator characters, dropping empty tokens; 'nocrlf' also splits on CR and LF.",
    tokens,
    {
      examples: [
        { call: "tokens('a b,c', ' ,')", result: ['a', 'b', 'c'] },
        { call: "tokens(unescape('a\\r\\nb c'), ' ', 'nocrlf')", result: ['a', 'b', 'c'] },
      ],
    },
  ),
  ...def(
    'string',
    'concat(any, any?): string',
    'Concatenate two values, or all values of one array, as strings.',
    (a: unknown, b?: unknown) => (b === undefined && Array.isArray(a) ? concatList(a) : concatList([a, b])),
    {
      examples: [
        { call: "concat('a', 'b')", result: 'ab' },
        { call: "concat(['a', 1, true])", result: 'a1true' },
      ],
    },
  ),
  ...def(
    'string',
    'sprintf(string, any?...): string',
    'Erlang io_lib:format: ~s ~p ~w ~B ~f ~e ~g ~c ~x ~n ~~.',
    (f: unknown, ...args: unknown[]) => sprintf(needStr('sprintf', f), args),
    {
      examples: [
        { call: "sprintf('hello, ~s!', 'steve')", result: 'hello, steve!' },
        { call: "sprintf('Name: ~ts, Count: ~p', 'ABC', 2)", result: 'Name: ABC, Count: 2' },
        { call: "sprintf('~p and ~.2f', 100, 3.14159)", result: '100 and 3.14' },
      ],
    },
  ),
  ...def(
    'string',
    'sprintf_s(string, array): string',
    'sprintf with its arguments in one array.',
    (f: unknown, args: unknown) => sprintf(needStr('sprintf_s', f), needList('sprintf_s', args)),
    {
      examples: [{ call: "sprintf_s('~s-~p', ['a', 1])", result: 'a-1' }],
    },
  ),
  ...def(
    'string',
    'pad(string, int, string?, string?): string',
    "Pad to a length ('trailing' by default, 'leading' or 'both') with a character (space by default).",
    pad,
    {
      examples: [
        { call: "pad('abc', 5)", result: 'abc  ' },
        { call: "pad('abc', 5, 'leading', '0')", result: '00abc' },
        { call: "pad('abc', 6, 'both', '-')", result: '-abc--' },
      ],
    },
  ),
  ...def(
    'string',
    'replace(string, string, string, string?): string',
    "Replace every occurrence ('all'), or the first ('leading') or last ('trailing').",
    replace,
    {
      examples: [
        { call: "replace('ababa', 'a', 'x')", result: 'xbxbx' },
        { call: "replace('ababa', 'a', 'x', 'trailing')", result: 'ababx' },
      ],
    },
  ),
  ...def('string', 'find(string, string, string?): string', "The rest of the string from the first ('leading') or last ('trailing') occurrence, or ''.", find, {
    examples: [
      { call: "find('a/b/c', '/')", result: '/b/c' },
      { call: "find('a/b/c', '/', 'trailing')", result: '/c' },
      { call: "find('abc', 'x')", result: '' },
    ],
  }),
  ...def(
    'string',
    'ascii(string): int',
    'The code of the first byte.',
    (v: unknown) => {
      const s = Buffer.from(needStr('ascii', v), 'utf8');
      if (s.length === 0) throw new RuleEvalError('rule.bad_argument', 'ascii: empty string');
      return s[0];
    },
    { examples: [{ call: "ascii('a')", result: 97 }] },
  ),
  ...def('string', 'join_to_string(any, array?): string', "Join the values of an array as strings, with ', ' or the given separator first.", joinToString, {
    examples: [
      { call: "join_to_string(['a', 1])", result: 'a, 1' },
      { call: "join_to_string('-', ['a', 'b'])", result: 'a-b' },
    ],
  }),
  ...def(
    'string',
    'join_to_sql_values_string(array): string',
    'The values as an SQL VALUES list: strings quoted, numbers as they are.',
    (l: unknown) => needList('join_to_sql_values_string', l).map(sqlValue).join(', '),
    {
      examples: [{ call: "join_to_sql_values_string(['a', 1, 'it''s'])", result: "'a', 1, 'it\\'s'" }],
    },
  ),
  ...def(
    'string',
    'unescape(string): string',
    'Turn escape sequences (\\n \\t \\r \\\\ \\" \\\' \\xHH…) into the characters they stand for.',
    (v: unknown) => unescapeText(needStr('unescape', v)),
    {
      examples: [
        { call: "strlen(unescape('a\\nb'))", result: 3 },
        { call: "unescape('\\x41')", result: 'A' },
        { call: "unescape('\\q')", error: true },
        { call: "unescape('a\\\\')", result: 'a\\' },
        { call: "unescape('\\\\')", result: '\\' },
      ],
    },
  ),
];
