// Date and time functions. Units are second, millisecond, microsecond, nanosecond; offsets are
// 'z'/'Z', 'local', '+HHMM', '+HH:MM', '+HH:MM:SS' or seconds. Nanosecond epochs exceed 2^53 and
// lose precision as JS numbers (see docs/rule-functions.md).
import { RuleEvalError } from '../errors.js';
import { isBinary, text } from '../values.js';
import { needInt, needNum, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

const UNITS: Record<string, number> = { second: 1, millisecond: 1e3, microsecond: 1e6, nanosecond: 1e9 };

function unitFactor(fn: string, u: unknown): number {
  if (u === undefined) return 1;
  const name = needStr(fn, u);
  const f = Object.hasOwn(UNITS, name) ? UNITS[name] : undefined;
  if (f === undefined) throw new RuleEvalError('rule.bad_argument', `${fn}: unknown time unit ${JSON.stringify(name)}`);
  return f;
}

function digitsOf(factor: number): number {
  return Math.round(Math.log10(factor));
}

function localOffsetSeconds(epochMs: number): number {
  return -new Date(epochMs).getTimezoneOffset() * 60;
}

/** An offset argument → seconds east of UTC ('local' needs the instant). */
export function offsetSeconds(fn: string, o: unknown, epochMs: number): number {
  if (typeof o === 'number' && Number.isInteger(o)) return o;
  if (!isBinary(o)) throw new RuleEvalError('rule.bad_argument', `${fn}: bad time offset`);
  const s = text(o);
  if (s === 'z' || s === 'Z') return 0;
  if (s === 'local') return localOffsetSeconds(epochMs);
  const m = /^([+-])(\d{2}):?(\d{2})(?::(\d{2}))?$/.exec(s);
  if (!m) throw new RuleEvalError('rule.bad_argument', `${fn}: bad time offset ${JSON.stringify(s)}`);
  const secs = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  return m[1] === '-' ? -secs : secs;
}

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

function offsetText(secs: number, style: 'z' | ':z' | '::z'): string {
  const sign = secs < 0 ? '-' : '+';
  const a = Math.abs(secs);
  const h = pad(Math.floor(a / 3600), 2);
  const m = pad(Math.floor((a % 3600) / 60), 2);
  const s = pad(a % 60, 2);
  return style === 'z' ? `${sign}${h}${m}` : style === ':z' ? `${sign}${h}:${m}` : `${sign}${h}:${m}:${s}`;
}

/** An epoch in a unit → whole seconds and the fraction in nanoseconds. */
function split(epoch: number, factor: number): { secs: number; nanos: number } {
  const secs = Math.floor(epoch / factor);
  const rest = epoch - secs * factor;
  return { secs, nanos: Math.round(rest * (1e9 / factor)) };
}

function civil(secs: number, offset: number): Date {
  const d = new Date((secs + offset) * 1000);
  if (Number.isNaN(d.getTime())) throw new RuleEvalError('rule.bad_argument', 'time out of range');
  return d;
}

function rfc3339(epoch: number, factor: number): string {
  const { secs, nanos } = split(epoch, factor);
  const off = localOffsetSeconds(secs * 1000);
  const d = civil(secs, off);
  const digits = digitsOf(factor);
  const frac = digits > 0 ? `.${pad(Math.floor(nanos / 10 ** (9 - digits)), digits)}` : '';
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${frac}${offsetText(off, ':z')}`;
}

function parseRfc3339(s: string, factor: number): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) throw new RuleEvalError('rule.bad_argument', `rfc3339_to_unix_ts: not an RFC 3339 time: ${JSON.stringify(s)}`);
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const off = m[8] === 'Z' || m[8] === 'z' ? 0 : offsetSeconds('rfc3339_to_unix_ts', m[8], ms);
  const secs = ms / 1000 - off;
  const frac = m[7] ? Number(`0.${m[7]}`) : 0;
  return secs * factor + Math.floor(frac * factor + 1e-9);
}

function formatDate(unit: unknown, offset: unknown, format: unknown, epoch?: unknown): string {
  const factor = unitFactor('format_date', unit);
  const e = epoch === undefined ? Date.now() * (factor / 1e3) : needNum('format_date', epoch);
  const { secs, nanos } = split(Math.floor(e), factor);
  const off = offsetSeconds('format_date', offset, secs * 1000);
  const d = civil(secs, off);
  return needStr('format_date', format).replace(/%(::z|:z|z|[36]?N|[YmdHMS%])/g, (_, p: string) => {
    switch (p) {
      case 'Y': return pad(d.getUTCFullYear(), 4);
      case 'm': return pad(d.getUTCMonth() + 1, 2);
      case 'd': return pad(d.getUTCDate(), 2);
      case 'H': return pad(d.getUTCHours(), 2);
      case 'M': return pad(d.getUTCMinutes(), 2);
      case 'S': return pad(d.getUTCSeconds(), 2);
      case 'N': return pad(nanos, 9);
      case '3N': return pad(Math.floor(nanos / 1e6), 3);
      case '6N': return pad(Math.floor(nanos / 1e3), 6);
      case 'z': return offsetText(off, 'z');
      case ':z': return offsetText(off, ':z');
      case '::z': return offsetText(off, '::z');
      default: return '%';
    }
  });
}

const FIELD_RE: Record<string, string> = {
  Y: '(\\d{4})', m: '(\\d{2})', d: '(\\d{2})', H: '(\\d{2})', M: '(\\d{2})', S: '(\\d{2})',
  N: '(\\d{9})', '3N': '(\\d{3})', '6N': '(\\d{6})', z: '([+-]\\d{4})', ':z': '([+-]\\d{2}:\\d{2})', '::z': '([+-]\\d{2}:\\d{2}:\\d{2})',
};

/** A time formatted by `format` → epoch in the unit, in UTC unless the text carries an offset. */
function parseDate(factor: number, format: string, input: string): number {
  const names: string[] = [];
  let re = '^';
  let last = 0;
  for (const m of format.matchAll(/%(::z|:z|z|[36]?N|[YmdHMS])/g)) {
    re += format.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re += FIELD_RE[m[1] as string];
    names.push(m[1] as string);
    last = (m.index ?? 0) + m[0].length;
  }
  re += `${format.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  const m = new RegExp(re).exec(input);
  if (!m) throw new RuleEvalError('rule.bad_argument', `date_to_unix_ts: ${JSON.stringify(input)} does not match ${JSON.stringify(format)}`);
  const f: Record<string, string> = {};
  names.forEach((n, i) => {
    f[n] = m[i + 1] as string;
  });
  const ms = Date.UTC(Number(f.Y ?? 1970), Number(f.m ?? 1) - 1, Number(f.d ?? 1), Number(f.H ?? 0), Number(f.M ?? 0), Number(f.S ?? 0));
  const zone = f.z ?? f[':z'] ?? f['::z'];
  const off = zone ? offsetSeconds('date_to_unix_ts', zone, ms) : 0;
  const nanos = f.N ? Number(f.N) : f['3N'] ? Number(f['3N']) * 1e6 : f['6N'] ? Number(f['6N']) * 1e3 : 0;
  return (ms / 1000 - off) * factor + Math.floor((nanos * factor) / 1e9);
}

function dateToUnixTs(unit: unknown, a: unknown, b: unknown, c?: unknown): number {
  const factor = unitFactor('date_to_unix_ts', unit);
  if (c === undefined) return parseDate(factor, needStr('date_to_unix_ts', a), needStr('date_to_unix_ts', b));
  const t = parseDate(factor, needStr('date_to_unix_ts', b), needStr('date_to_unix_ts', c));
  return t - offsetSeconds('date_to_unix_ts', a, (t / factor) * 1000) * factor;
}

const tz = (v: unknown): number => offsetSeconds('timezone_to_offset_seconds', v, Date.now());

export const TIME_FUNCTIONS: FunctionSpec[] = [
  ...def('time', 'now_timestamp(string?): int', 'Now as a Unix epoch, in seconds or the given unit.', (u?: unknown) => Math.floor(Date.now() * (unitFactor('now_timestamp', u) / 1e3)), {
    volatile: true, examples: [{ call: 'now_timestamp()', type: 'integer' }, { call: "now_timestamp('millisecond')", type: 'integer' }],
  }),
  ...def('time', 'now_rfc3339(string?): string', 'Now as RFC 3339 local time, to the second or the given unit.', (u?: unknown) => {
    const f = unitFactor('now_rfc3339', u);
    return rfc3339(Math.floor(Date.now() * (f / 1e3)), f);
  }, { volatile: true, examples: [{ call: 'now_rfc3339()', type: 'string' }] }),
  ...def('time', 'unix_ts_to_rfc3339(int, string?): string', 'A Unix epoch (seconds, or the given unit) as RFC 3339 local time.', (e: unknown, u?: unknown) => rfc3339(needInt('unix_ts_to_rfc3339', e), unitFactor('unix_ts_to_rfc3339', u)), {
    volatile: true, examples: [{ call: "rfc3339_to_unix_ts(unix_ts_to_rfc3339(1650874318331, 'millisecond'), 'millisecond')", result: 1650874318331 }],
  }),
  ...def('time', 'rfc3339_to_unix_ts(string, string?): int', 'An RFC 3339 time as a Unix epoch in seconds or the given unit.', (s: unknown, u?: unknown) => parseRfc3339(needStr('rfc3339_to_unix_ts', s), unitFactor('rfc3339_to_unix_ts', u)), {
    examples: [
      { call: "rfc3339_to_unix_ts('2022-04-25T16:11:16+08:00')", result: 1650874276 },
      { call: "rfc3339_to_unix_ts('2022-04-25T16:11:58.331+08:00', 'millisecond')", result: 1650874318331 },
      { call: "rfc3339_to_unix_ts('yesterday')", error: true },
    ],
  }),
  ...def('time', 'format_date(string, any, string, int?): string', 'Format an epoch (now by default) in a unit at an offset: %Y %m %d %H %M %S %N %3N %6N %z %:z %::z.', formatDate, {
    volatile: true,
    examples: [
      { call: "format_date('second', '+0800', '%Y-%m-%d %H:%M:%S%:z', 1653561612)", result: '2022-05-26 18:40:12+08:00' },
      { call: "format_date('millisecond', 'Z', '%H:%M:%S.%3N', 1653561612123)", result: '10:40:12.123' },
    ],
  }),
  ...def('time', 'date_to_unix_ts(string, any, string, string?): int', 'Parse a formatted time into a Unix epoch: date_to_unix_ts(unit, [offset,] format, text).', dateToUnixTs, {
    volatile: true,
    examples: [
      { call: "date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S%:z', '2022-05-26 18:40:12+08:00')", result: 1653561612 },
      { call: "date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S', '2022-05-26 10:40:12')", result: 1653561612 },
      { call: "date_to_unix_ts('second', '+08:00', '%Y-%m-%d %H:%M:%S', '2022-05-26 18:40:12')", result: 1653561612 },
    ],
  }),
  ...def('time', 'timezone_to_offset_seconds(any): int', 'An offset (z, local, +HH:MM…) in seconds.', tz, { volatile: true, examples: [{ call: "timezone_to_offset_seconds('+08:00')", result: 28800 }] }),
  ...def('time', 'timezone_to_second(any): int', 'Same as timezone_to_offset_seconds.', tz, { volatile: true, examples: [{ call: "timezone_to_second('-0130')", result: -5400 }] }),
];
