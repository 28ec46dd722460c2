// weir check: validate weir.yaml and the rule files without connecting to anything; with
// --connect, also ask every sink whether it has what the rules need.
import { verifySinks } from '../core/app/verify-sinks.js';
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './command.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir check [--config FILE] [--rules DIR] [--connect]

Validates weir.yaml and every rule file (schema, rule SQL, sink references) without connecting.
Exits 0 when everything is valid, 1 with each error as file:line:col otherwise.

With --connect it then connects to every sink and checks what the rules need: for PostgreSQL each
action's table, each mapped column and that it takes the values of the rule's own tests, the
privilege to insert, the unique key or constraint an on_conflict names, the dead-letter and ledger
tables; for Kafka each topic; for mqtt a connection with the sink's own credentials and TLS
(nothing published, no session left) and what the broker's CONNACK refuses (retain, QoS 1); for
http a TCP connection (and TLS handshake) to each fixed origin, with no request sent. Each problem
is one line naming the rule file and line; a missing table comes with a CREATE TABLE to start
from (with the key its on_conflict needs).
Exits 1 when a sink lacks something, 3 when a sink cannot be reached (or refuses weir's
credentials).

${CONFIG_HELP}  -r, --rules DIR     rule directory (default: rules_dir of weir.yaml)
  --connect           also check the sinks themselves
`;

export const checkCommand: Command = {
  summary: 'validate weir.yaml and rules/ (--connect: and what the sinks have)',
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, rules: { type: 'string', short: 'r' }, connect: { type: 'boolean' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config, p.values.rules);
    if (!cfg) return 1;
    for (const w of cfg.rules.flatMap((r) => r.warnings)) process.stderr.write(`warning: ${w.message}\n`);
    process.stdout.write(`ok: ${cfg.file}: ${cfg.sinks.size} sink(s), ${cfg.rules.length} rule(s) in ${cfg.rulesDir}\n`);
    if (!p.values.connect) return 0;
    let code = 0;
    for (const r of await verifySinks(cfg, AbortSignal.timeout(60_000))) {
      if (r.unreachable) {
        process.stderr.write(`error: sink ${r.sink}: cannot connect: ${r.unreachable}\n`);
        code = Math.max(code, 3);
      } else if (!r.checked) {
        process.stdout.write(`sink ${r.sink}: not checked (its type has no checks yet)\n`);
      } else if (r.problems.length === 0) {
        process.stdout.write(`ok: sink ${r.sink} has what the rules need\n`);
      }
      for (const pr of r.problems) {
        process.stderr.write(`error: ${pr.message}\n`);
        if (pr.suggestion) process.stderr.write(`${pr.suggestion.replace(/^/gm, '    ')}\n`);
        code = Math.max(code, 1);
      }
    }
    return code;
  },
};
