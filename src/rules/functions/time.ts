// Date and time functions. Units are second, millisecond, microsecond, nanosecond; offsets are
// 'z'/'Z', 'local', '+HHMM', '+HH:MM', '+HH:MM:SS' or seconds. Nanosecond epochs exceed 2^53 and
// lose precision as JS numbers (see docs/rule-functions.md).
import { RuleEvalError } from '../errors.js';
import { isBinary, text } from '../values/value-types.js';
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

/** string:to_integer over the whole text: an optional sign and digits, nothing else. */
function wholeInt(fn: string, s: string, what: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new RuleEvalError('rule.bad_argument', `${fn}: bad ${what} ${JSON.stringify(s)}`);
  return Number(s);
}

/**
 * An offset argument → seconds east of UTC, as emqx_utils_calendar:offset_second: an integer is
 * seconds, undefined is 0, 'z'/'Z' is 0, 'local' is the host's (needs the instant), else a sign
 * and hh:mm, hh:mm:ss or hhmm with hours up to 23 and minutes and seconds up to 59.
 */
export function offsetSeconds(fn: string, o: unknown, epochMs: number): number {
  if (typeof o === 'number' && Number.isInteger(o)) return o;
  if (o === undefined) return 0;
  if (!isBinary(o)) throw new RuleEvalError('rule.bad_argument', `${fn}: bad time offset`);
  const s = text(o);
  if (s === 'z' || s === 'Z') return 0;
  if (s === 'local') return localOffsetSeconds(epochMs);
  const sign = s[0] === '+' ? 1 : s[0] === '-' ? -1 : 0;
  const parts = s
    .slice(1)
    .split(':')
    .filter((p) => p !== '');
  const hms =
    parts.length === 2 || parts.length === 3 ? parts : parts.length === 1 && parts[0]?.length === 4 ? [parts[0].slice(0, 2), parts[0].slice(2)] : undefined;
  if (sign === 0 || !hms) throw new RuleEvalError('rule.bad_argument', `${fn}: bad time offset ${JSON.stringify(s)}`);
  const [h, m, sec] = [
    wholeInt(fn, hms[0] as string, 'offset hour'),
    wholeInt(fn, hms[1] as string, 'offset minute'),
    wholeInt(fn, hms[2] ?? '0', 'offset second'),
  ];
  if (h > 23 || m > 59 || sec > 59) throw new RuleEvalError('rule.bad_argument', `${fn}: time offset out of range ${JSON.stringify(s)}`);
  return sign * (h * 3600 + m * 60 + sec);
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
      case 'Y':
        return pad(d.getUTCFullYear(), 4);
      case 'm':
        return pad(d.getUTCMonth() + 1, 2);
      case 'd':
        return pad(d.getUTCDate(), 2);
      case 'H':
        return pad(d.getUTCHours(), 2);
      case 'M':
        return pad(d.getUTCMinutes(), 2);
      case 'S':
        return pad(d.getUTCSeconds(), 2);
      case 'N':
        return pad(nanos, 9);
      case '3N':
        return pad(Math.floor(nanos / 1e6), 3);
      case '6N':
        return pad(Math.floor(nanos / 1e3), 6);
      case 'z':
        return offsetText(off, 'z');
      case ':z':
        return offsetText(off, ':z');
      case '::z':
        return offsetText(off, '::z');
      default:
        return '%';
    }
  });
}

/** Width of each conversion as date_to_unix_ts reads it; literal text is skipped by its length. */
const FIELD_WIDTH: Record<string, number> = { Y: 4, m: 2, d: 2, H: 2, M: 2, S: 2, N: 9, '3N': 3, '6N': 6, z: 5, ':z': 6, '::z': 9 };
const DATE_PARTS = ['Y', 'm', 'd', 'H', 'M', 'S'] as const;
const PART_NAMES: Record<string, string> = { Y: 'year', m: 'month', d: 'day', H: 'hour', M: 'minute', S: 'second' };

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/**
 * A time written in `format` → epoch in the unit, as emqx_utils_calendar reads it: each
 * conversion takes its fixed width, literal text is skipped by its length without comparing it
 * (so '%H-%M-%S' reads '10:40:12', as EMQX 4 did), text after the format is ignored. Year,
 * month, day, hour, minute and second are all required; the date must exist (no 32nd, no 29
 * February outside leap years); an offset in the text (%z %:z %::z) is subtracted.
 */
function parseDate(factor: number, format: string, input: string): number {
  const fn = 'date_to_unix_ts';
  const f: Record<string, string> = {};
  let at = 0;
  for (let i = 0; i < format.length && at < input.length; ) {
    const m = /^%(::z|:z|z|[36]?N|[YmdHMS])/.exec(format.slice(i));
    const width = m ? (FIELD_WIDTH[m[1] as string] as number) : 1;
    if (at + width > input.length) throw new RuleEvalError('rule.bad_argument', `${fn}: ${JSON.stringify(input)} is shorter than ${JSON.stringify(format)}`);
    if (m) f[m[1] as string] = input.slice(at, at + width);
    at += width;
    i += m ? m[0].length : 1;
  }
  const v: Record<string, number> = {};
  for (const p of DATE_PARTS) {
    if (f[p] === undefined) throw new RuleEvalError('rule.bad_argument', `${fn}: the format has no ${PART_NAMES[p]} (%${p})`);
    v[p] = wholeInt(fn, f[p], `${PART_NAMES[p]} in ${JSON.stringify(input)} for ${JSON.stringify(format)}`);
  }
  const { Y, m: mo, d, H, M, S } = v as Record<(typeof DATE_PARTS)[number], number>;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(Y, mo)) throw new RuleEvalError('rule.bad_argument', `${fn}: no such date ${Y}-${mo}-${d}`);
  const zone = f.z ?? f[':z'] ?? f['::z'];
  const utc = new Date(0);
  utc.setUTCFullYear(Y, mo - 1, d); // not Date.UTC, which reads years 0-99 as 1900-1999
  const secs = utc.getTime() / 1000 + H * 3600 + M * 60 + S - (zone !== undefined ? offsetSeconds(fn, zone, 0) : 0);
  if (!(secs >= -62167219200 && secs < 253402300800)) throw new RuleEvalError('rule.bad_argument', `${fn}: ${JSON.stringify(input)} is outside years 0-9999`);
  // Fractions add up in the finest unit given, then convert down to the unit asked for.
  const nanos =
    (f.N !== undefined ? wholeInt(fn, f.N, 'nanoseconds') : 0) +
    (f['6N'] !== undefined ? wholeInt(fn, f['6N'], 'microseconds') * 1e3 : 0) +
    (f['3N'] !== undefined ? wholeInt(fn, f['3N'], 'milliseconds') * 1e6 : 0);
  return secs * factor + Math.floor((nanos * factor) / 1e9);
}

function dateToUnixTs(unit: unknown, a: unknown, b: unknown, c?: unknown): number {
  const factor = unitFactor('date_to_unix_ts', unit);
  if (c === undefined) return parseDate(factor, needStr('date_to_unix_ts', a), needStr('date_to_unix_ts', b));
  const t = parseDate(factor, needStr('date_to_unix_ts', b), needStr('date_to_unix_ts', c));
  return t - offsetSeconds('date_to_unix_ts', a, (t / factor) * 1000) * factor;
}

const tz = (v: unknown): number => offsetSeconds('timezone_to_offset_seconds', v, Date.now());

export const TIME_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'time',
    'now_timestamp(string?): int',
    'Now as a Unix epoch, in seconds or the given unit.',
    (u?: unknown) => Math.floor(Date.now() * (unitFactor('now_timestamp', u) / 1e3)),
    {
      volatile: true,
      examples: [
        { call: 'now_timestamp()', type: 'integer' },
        { call: "now_timestamp('millisecond')", type: 'integer' },
      ],
    },
  ),
  ...def(
    'time',
    'now_rfc3339(string?): string',
    'Now as RFC 3339 local time, to the second or the given unit.',
    (u?: unknown) => {
      const f = unitFactor('now_rfc3339', u);
      return rfc3339(Math.floor(Date.now() * (f / 1e3)), f);
    },
    { volatile: true, examples: [{ call: 'now_rfc3339()', type: 'string' }] },
  ),
  ...def(
    'time',
    'unix_ts_to_rfc3339(int, string?): string',
    'A Unix epoch (seconds, or the given unit) as RFC 3339 local time.',
    (e: unknown, u?: unknown) => rfc3339(needInt('unix_ts_to_rfc3339', e), unitFactor('unix_ts_to_rfc3339', u)),
    {
      volatile: true,
      examples: [{ call: "rfc3339_to_unix_ts(unix_ts_to_rfc3339(1650874318331, 'millisecond'), 'millisecond')", result: 1650874318331 }],
    },
  ),
  ...def(
    'time',
    'rfc3339_to_unix_ts(string, string?): int',
    'An RFC 3339 time as a Unix epoch in seconds or the given unit.',
    (s: unknown, u?: unknown) => parseRfc3339(needStr('rfc3339_to_unix_ts', s), unitFactor('rfc3339_to_unix_ts', u)),
    {
      examples: [
        { call: "rfc3339_to_unix_ts('2022-04-25T16:11:16+08:00')", result: 1650874276 },
        { call: "rfc3339_to_unix_ts('2022-04-25T16:11:58.331+08:00', 'millisecond')", result: 1650874318331 },
        { call: "rfc3339_to_unix_ts('yesterday')", error: true },
      ],
    },
  ),
  ...def(
    'time',
    'format_date(string, any, string, int?): string',
    'Format an epoch (now by default) in a unit at an offset: %Y %m %d %H %M %S %N %3N %6N %z %:z %::z.',
    formatDate,
    {
      volatile: true,
      examples: [
        { call: "format_date('second', '+0800', '%Y-%m-%d %H:%M:%S%:z', 1653561612)", result: '2022-05-26 18:40:12+08:00' },
        { call: "format_date('millisecond', 'Z', '%H:%M:%S.%3N', 1653561612123)", result: '10:40:12.123' },
      ],
    },
  ),
  ...def(
    'time',
    'date_to_unix_ts(string, any, string, string?): int',
    'Parse a formatted time into a Unix epoch: date_to_unix_ts(unit, [offset,] format, text).',
    dateToUnixTs,
    {
      volatile: true,
      examples: [
        { call: "date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S%:z', '2022-05-26 18:40:12+08:00')", result: 1653561612 },
        { call: "date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S', '2022-05-26 10:40:12')", result: 1653561612 },
        { call: "date_to_unix_ts('second', '+08:00', '%Y-%m-%d %H:%M:%S', '2022-05-26 18:40:12')", result: 1653561612 },
        { call: "date_to_unix_ts('millisecond', '+08:00', '%Y-%m-%d %H-%M-%S.%3N', '2024-03-01 10:30:38.333')", result: 1709260238333 },
        { call: "date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S', '2023-02-29 10:40:12')", error: true },
        { call: "date_to_unix_ts('second', '%H:%M:%S', '10:40:12')", error: true },
      ],
    },
  ),
  ...def('time', 'timezone_to_offset_seconds(any): int', 'An offset (z, local, +HH:MM…) in seconds.', tz, {
    volatile: true,
    examples: [
      { call: "timezone_to_offset_seconds('+08:00')", result: 28800 },
      { call: "timezone_to_offset_seconds('+00:01:42')", result: 102 },
      { call: "timezone_to_offset_seconds('z')", result: 0 },
    ],
  }),
  ...def('time', 'timezone_to_second(any): int', 'Same as timezone_to_offset_seconds.', tz, {
    volatile: true,
    examples: [{ call: "timezone_to_second('-0130')", result: -5400 }],
  }),
];
