// Loads the configuration for a command, printing every error (file:line:col) when it is invalid.
import { ConfigErrors, loadConfig } from '../config/load.js';
import type { WeirConfig } from '../config/types.js';
import { type ConfigError, errorText } from '../errors.js';

/**
 * weir.yaml for a command that needs only its sinks and dead-letter settings, not the rules
 * (`weir dlq list|show|purge`): it is most needed when a rule is broken, so the rule files'
 * errors are warnings here, and the config holds the rules that loaded.
 */
export function loadSettingsOrReport(file: string | undefined): WeirConfig | undefined {
  const ruleErrors: ConfigError[] = [];
  const cfg = loadOrReport(file, undefined, ruleErrors);
  if (cfg && ruleErrors.length) {
    for (const e of ruleErrors) process.stderr.write(`warning: ${e.message}\n`);
    process.stderr.write(
      `warning: ${ruleErrors.length} error(s) in the rules of ${cfg.rulesDir}: weir run would not start with them (weir check shows them); read on without those rules\n`,
    );
  }
  return cfg;
}

export function loadOrReport(file: string | undefined, rulesDir?: string, ruleErrors?: ConfigError[]): WeirConfig | undefined {
  try {
    return loadConfig(file ?? 'weir.yaml', process.env, rulesDir, ruleErrors);
  } catch (err) {
    if (err instanceof ConfigErrors) {
      for (const e of err.errors) process.stderr.write(`error: ${e.message}\n`);
      process.stderr.write(`${err.errors.length} error(s); nothing was started.\n`);
    } else {
      process.stderr.write(`error: ${errorText(err)}\n`);
    }
    return undefined;
  }
}
