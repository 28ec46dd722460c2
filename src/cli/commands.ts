// The list of commands, each in its own file.
import type { Command } from './command.js';
import { checkCommand } from './check.js';
import { dlqCommand } from './dlq.js';
import { evalCommand } from './eval.js';
import { healthCommand } from './health.js';
import { migrateCommand } from './migrate.js';
import { reconcileCommand } from './reconcile.js';
import { runCommand } from './run.js';
import { testCommand } from './test.js';

export const COMMANDS: Record<string, Command> = {
  run: runCommand,
  check: checkCommand,
  migrate: migrateCommand,
  reconcile: reconcileCommand,
  dlq: dlqCommand,
  eval: evalCommand,
  test: testCommand,
  health: healthCommand,
  // Loaded only when run: the demo's file and what it imports are no part of any other command.
  demo: {
    summary: 'run weir on an embedded broker and database with simulated devices',
    run: async (args) => (await import('./demo.js')).runDemo(args),
  },
};

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(9)} ${c.summary}`);
  return `usage: weir <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nweir <command> --help shows a command's options.\n`;
}
