// sprintf (a subset of Erlang's io_lib:format) and unescape (EMQX's escape sequences).
import { RuleEvalError } from '../errors.js';
import { numberValue, WholeFloat } from '../values/floats.js';
import { formatNumber } from '../values/number-text.js';
import { toStr } from '../values/to-str.js';
import { isBinary, text } from '../values/value-types.js';
import { checkSize } from './args.js';

/** Erlang's ~p of a value: strings quoted as binaries are printed by ~p (<<"a">>) — we print them plainly. */
function printTerm(v: unknown): string {
  if (isBinary(v)) return text(v);
  return toStr(v);
}

function needNumber(v: unknown, d: string): number {
  const n = numberValue(v);
  if (n === undefined) throw new RuleEvalError('rule.bad_argument', `sprintf: ~${d} needs a number, got ${toStr(v)}`);
  return n;
}

/**
 * ~[width][.precision]c with c one of s p w B b f e g c x X n i ~. Anything else, or too few or
 * too many arguments, fails as io_lib:format does.
 */
export function sprintf(format: string, args: readonly unknown[]): string {
  let out = '';
  let ai = 0;
  const next = (d: string): unknown => {
    if (ai >= args.length) throw new RuleEvalError('rule.bad_argument', `sprintf: not enough arguments for ~${d}`);
    return args[ai++];
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string;
    if (c !== '~') {
      out += c;
      continue;
    }
    // ~F.PmC: width, precision, then the modifier t (Unicode) or l (no lists as strings), which
    // change nothing for weir's values: ~ts prints a UTF-8 string as ~s does.
    const m = /^(-?\d+)?(?:\.(\d+))?[tl]?([a-zA-Z~])/.exec(format.slice(i + 1));
    if (!m) throw new RuleEvalError('rule.bad_argument', `sprintf: bad directive at ${i}`);
    i += m[0].length;
    const width = m[1] === undefined ? undefined : Number(m[1]);
    const prec = m[2] === undefined ? undefined : Number(m[2]);
    const d = m[3] as string;
    let piece: string;
    switch (d) {
      case '~':
        piece = '~';
        break;
      case 'n':
        piece = '\n';
        break;
      case 's':
        piece = printTerm(next(d));
        if (prec !== undefined) piece = piece.slice(0, prec);
        break;
      case 'p':
      case 'w': {
        const v = next(d);
        piece = typeof v === 'number' ? formatNumber(v) : v instanceof WholeFloat ? toStr(v) : printTerm(v);
        break;
      }
      case 'i':
        next(d);
        piece = '';
        break;
      case 'c':
        piece = String.fromCodePoint(needNumber(next(d), d));
        break;
      case 'B':
      case 'b': {
        const v = needNumber(next(d), d);
        piece = Math.trunc(v).toString(prec ?? 10);
        if (d === 'B') piece = piece.toUpperCase();
        break;
      }
      case 'x':
      case 'X': {
        const v = needNumber(next(d), d);
        const prefix = toStr(next(d));
        piece = prefix + Math.trunc(v).toString(16);
        if (d === 'X') piece = piece.toUpperCase();
        break;
      }
      case 'f':
        piece = needNumber(next(d), d).toFixed(prec ?? 6);
        break;
      case 'e':
        piece = needNumber(next(d), d).toExponential(Math.max(0, (prec ?? 6) - 1));
        break;
      case 'g': {
        const v = needNumber(next(d), d);
        piece = Math.abs(v) >= 0.1 && Math.abs(v) < 10000 ? v.toFixed(prec ?? 6) : v.toExponential(Math.max(0, (prec ?? 6) - 1));
        break;
      }
      default:
        throw new RuleEvalError('rule.bad_argument', `sprintf: unsupported directive ~${d}`);
    }
    if (width !== undefined) {
      if (Math.abs(width) > 4096) throw new RuleEvalError('rule.limit', 'sprintf: field width too large');
      piece = width < 0 ? piece.padEnd(-width) : piece.padStart(width);
    }
    out += piece;
    checkSize('sprintf', out.length);
  }
  if (ai < args.length) throw new RuleEvalError('rule.bad_argument', `sprintf: ${args.length - ai} argument(s) left over`);
  return out;
}

const SIMPLE: Record<string, string> = {
  '\\': '\\',
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  "'": "'",
  '"': '"',
  '?': '?',
  a: '\u0007',
};

/** EMQX's unescape: the C escapes and \xHH…; any other escape is an error. */
export function unescapeText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = s[i + 1];
    if (e === undefined) {
      // A lone backslash at the end stays, as in EMQX (unescape('\\') is one backslash).
      out += c;
      continue;
    }
    if (e === 'x') {
      const m = /^[0-9a-fA-F]+/.exec(s.slice(i + 2));
      if (!m) throw new RuleEvalError('rule.bad_argument', 'unescape: \\x needs hex digits');
      const code = parseInt(m[0], 16);
      if (!(code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) throw new RuleEvalError('rule.bad_argument', 'unescape: invalid character code');
      out += String.fromCodePoint(code);
      i += 1 + m[0].length;
      continue;
    }
    const simple = SIMPLE[e];
    if (simple === undefined) throw new RuleEvalError('rule.bad_argument', `unescape: unrecognized escape sequence \\${e}`);
    out += simple;
    i++;
  }
  return out;
}
