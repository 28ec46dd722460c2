// weir check: validate weir.yaml and the rule files without connecting to anything.
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './commands.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir check [--config FILE] [--rules DIR]

Validates weir.yaml and every rule file (schema, rule SQL, sink references) without connecting.
Exits 0 when everything is valid, 1 with each error as file:line:col otherwise.

${CONFIG_HELP}  -r, --rules DIR     rule directory (default: rules_dir of weir.yaml)
`;

export const checkCommand: Command = {
  summary: 'validate weir.yaml and rules/ without connecting',
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, rules: { type: 'string', short: 'r' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config, p.values.rules);
    if (!cfg) return 1;
    process.stdout.write(`ok: ${cfg.file}: ${cfg.sinks.size} sink(s), ${cfg.rules.length} rule(s) in ${cfg.rulesDir}\n`);
    return 0;
  },
};
