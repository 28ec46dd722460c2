// Option parsing shared by the commands: node's parseArgs, with --help and clear usage errors, and
// numeric options checked here, once for every command (an option declared with numberOption()
// arrives as a number or not at all; `--grace-ms abc` is a usage error naming the option).
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { errorText } from '../errors.js';

/** What a numeric option accepts; a value outside it is a usage error that says so. */
export interface NumberSpec {
  /** What the number counts, for the error ('milliseconds', 'letters per second'). */
  readonly unit: string;
  /** What the value is, when 'a whole number of <unit>' reads badly ('a port number'). */
  readonly noun?: string;
  /** The least value accepted (inclusive). */
  readonly min: number;
  readonly max?: number;
  /** Above `min`, not equal to it (a rate of 0 is not a rate). */
  readonly aboveMin?: boolean;
  /** Decimals accepted; by default a whole number. */
  readonly fraction?: boolean;
  /** A unit suffix the value may carry (`/s` in 200/s). */
  readonly suffix?: string;
}

type ParseArgsOption = NonNullable<ParseArgsConfig['options']>[string];
export type Options = Record<string, ParseArgsOption & { readonly number?: NumberSpec }>;

type Values<O extends Options> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : O[K] extends { number: NumberSpec } ? number : string;
};
/** Parses `args`; `exit` (after printing help or the error) when the command should exit. */
export type Parsed<O extends Options> = { exit: number } | { values: Values<O>; positionals: string[] };

/** A string option holding a number: parse() checks it against `spec` and hands back a number. */
export function numberOption<S extends NumberSpec>(spec: S): { readonly type: 'string'; readonly number: S } {
  return { type: 'string', number: spec };
}

export function parse<O extends Options>(args: string[], options: O, help: string, allowPositionals = false): Parsed<O> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    // parseArgs knows only its own keys: the number specs stay here.
    const plain = Object.fromEntries(Object.entries(options).map(([name, { number: _, ...o }]) => [name, o]));
    parsed = parseArgs({ args, options: { ...plain, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
  } catch (err) {
    process.stderr.write(`error: ${errorText(err)}\n\n${help}`);
    return { exit: 2 };
  }
  if (parsed.values.help) {
    process.stdout.write(help);
    return { exit: 0 };
  }
  const values: Record<string, unknown> = { ...parsed.values };
  for (const [name, o] of Object.entries(options)) {
    const text = values[name];
    if (!o.number || typeof text !== 'string') continue;
    const n = numberOf(text, o.number);
    if (n === undefined) return { exit: usageError(`--${name} takes ${describeNumber(o.number)}, not '${text}'`, help) };
    values[name] = n;
  }
  return { values: values as Values<O>, positionals: parsed.positionals };
}

/** The number `text` says, when `spec` accepts it. */
export function numberOf(text: string, spec: NumberSpec): number | undefined {
  let t = text.trim();
  if (spec.suffix && t.endsWith(spec.suffix)) t = t.slice(0, -spec.suffix.length);
  if (!(spec.fraction ? /^-?\d+(\.\d+)?$/ : /^-?\d+$/).test(t)) return undefined;
  const n = Number(t);
  if (!Number.isFinite(n) || (!spec.fraction && !Number.isSafeInteger(n))) return undefined;
  if (n < spec.min || (spec.aboveMin && n === spec.min) || (spec.max !== undefined && n > spec.max)) return undefined;
  return n;
}

/** 'a whole number of milliseconds, 0 or more', 'a number of letters per second above 0 (200 or 200/s)'. */
export function describeNumber(spec: NumberSpec): string {
  const range = spec.max !== undefined ? `from ${spec.min} to ${spec.max}` : spec.aboveMin ? `above ${spec.min}` : `${spec.min} or more`;
  const example = spec.suffix ? ` (e.g. 200 or 200${spec.suffix})` : '';
  return `${spec.noun ?? `${spec.fraction ? 'a number' : 'a whole number'} of ${spec.unit}`}, ${range}${example}`;
}

/** Prints a usage error and the help; returns the exit code for bad usage (2). */
export function usageError(text: string, help: string): number {
  process.stderr.write(`error: ${text}\n\n${help}`);
  return 2;
}

export const CONFIG_OPTION = { config: { type: 'string', short: 'c' } } as const;
export const CONFIG_HELP = '  -c, --config FILE   weir.yaml to read (default: ./weir.yaml; its rules_dir holds the rules)\n';
