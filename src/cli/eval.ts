// weir eval: the JSON-lines contract other tools test rules against (docs/rules.md). One output
// line per input line, in order; a bad line gets {"ok": false}, never a crash.
import { createInterface } from 'node:readline';
import { evalLine } from '../rules/tools/eval-lines.js';
import { parse } from './args.js';
import type { Command } from './command.js';

const HELP = `usage: weir eval < lines.jsonl

Reads JSON lines {"sql": "...", "event": {...}, "rule_id": "..."} from stdin and writes one line
per input: {"ok": true, "matched": bool, "outputs": [...]} or {"ok": false, "error": "..."}.
`;

export const evalCommand: Command = {
  summary: 'evaluate rule SQL over events given as JSON lines on stdin',
  async run(args) {
    const p = parse(args, {}, HELP);
    if ('exit' in p) return p.exit;
    const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of rl) {
      const out = await evalLine(line);
      if (!process.stdout.write(`${out}\n`)) await new Promise((r) => process.stdout.once('drain', r));
    }
    return 0;
  },
};
