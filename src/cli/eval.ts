// weir eval: the JSON-lines contract other tools test rules against (docs/rules.md). One output
// line per input line, in order; a bad line gets {"ok": false}, never a crash.
import { createInterface } from 'node:readline';
import { ConfigErrors, functionsWith, readSchemaSettings } from '../config/load.js';
import { errorText } from '../errors.js';
import type { FunctionRegistry } from '../rules/functions/registry.js';
import { evalLine } from '../rules/tools/eval-lines.js';
import { CONFIG_OPTION, parse } from './args.js';
import type { Command } from './command.js';

const HELP = `usage: weir eval [--config FILE] < lines.jsonl

Reads JSON lines {"sql": "...", "event": {...}, "rule_id": "..."} from stdin and writes one line
per input: {"ok": true, "matched": bool, "outputs": [...]} or {"ok": false, "error": "..."}.
A binary payload is given as {"$hex": "..."} or {"$base64": "..."}.

  -c, --config FILE   weir.yaml whose schemas: schema_decode and schema_encode use (spb_decode
                      needs none)
`;

export const evalCommand: Command = {
  summary: 'evaluate rule SQL over events given as JSON lines on stdin',
  async run(args) {
    const p = parse(args, CONFIG_OPTION, HELP);
    if ('exit' in p) return p.exit;
    let registry: FunctionRegistry;
    try {
      registry = functionsWith(readSchemaSettings(p.values.config));
    } catch (err) {
      for (const l of err instanceof ConfigErrors ? err.errors.map((e) => e.message) : [errorText(err)]) process.stderr.write(`error: ${l}\n`);
      return 1;
    }
    const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of rl) {
      const out = await evalLine(line, registry);
      if (!process.stdout.write(`${out}\n`)) await new Promise((r) => process.stdout.once('drain', r));
    }
    return 0;
  },
};
