// Loads the configuration for a command, printing every error (file:line:col) when it is invalid.
import { ConfigErrors, loadConfig, type WeirConfig } from '../config/load.js';
import { errorText } from '../errors.js';

export function loadOrReport(file: string | undefined, rulesDir?: string): WeirConfig | undefined {
  try {
    return loadConfig(file ?? 'weir.yaml', process.env, rulesDir);
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
