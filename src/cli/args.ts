// Option parsing shared by the commands: node's parseArgs, with --help and clear usage errors.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorText } from '../errors.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `args`; returns undefined (after printing help or the error) when the command should exit. */
type Values<O extends Options> = { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string };
export type Parsed<O extends Options> = { exit: number } | { values: Values<O>; positionals: string[] };

export function parse<O extends Options>(args: string[], options: O, help: string, allowPositionals = false): Parsed<O> {
  try {
    const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
    if ((parsed.values as { help?: boolean }).help) {
      process.stdout.write(help);
      return { exit: 0 };
    }
    return { values: parsed.values as Values<O>, positionals: parsed.positionals };
  } catch (err) {
    process.stderr.write(`${errorText(err)}\n\n${help}`);
    return { exit: 2 };
  }
}

/** Prints a usage error and the help; returns the exit code for bad usage (2). */
export function usageError(text: string, help: string): number {
  process.stderr.write(`error: ${text}\n\n${help}`);
  return 2;
}

export const CONFIG_OPTION = { config: { type: 'string', short: 'c' } } as const;
export const CONFIG_HELP = '  -c, --config FILE   weir.yaml to read (default: ./weir.yaml; its rules_dir holds the rules)\n';
