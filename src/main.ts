// The `weir` command: parse the first argument, hand the rest to the command's module.
import { COMMANDS, usage } from './cli/commands.js';
import { VERSION } from './version.js';

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`weir: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  return cmd.run(rest);
}
