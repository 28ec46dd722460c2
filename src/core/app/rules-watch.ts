// Reloading the rules when their files change, for `weir run` and `weir demo` alike: fs.watch on
// the rules directory and SIGHUP, both debounced, because an editor writes a file in several steps
// (truncate, write, rename) and one reload should follow the burst, not each step.
import { watch } from 'node:fs';
import type { Runtime } from './runtime.js';
import { errorText, type ConfigError } from '../../errors.js';
import type { Logger } from '../../log.js';

/** How long after the last change the rules are reloaded. */
const SETTLE_MS = 200;

export interface RulesWatch {
  close(): void;
}

/**
 * Reloads `runtime`'s rules from `dir` after each burst of changes there and on SIGHUP. An invalid
 * set is rejected whole by Runtime.reloadRules (logged, counted, shown on /rules); `reloaded` is
 * told how each reload ended, for a command that reports it on its own terms.
 */
export function watchRules(runtime: Pick<Runtime, 'reloadRules'>, dir: string, log: Logger, reloaded?: (errors: readonly ConfigError[]) => void): RulesWatch {
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    runtime.reloadRules().then(
      (errors) => reloaded?.(errors),
      (err: unknown) => log.error({ err: errorText(err) }, 'reloading the rules failed; the running rules stay'),
    );
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(reload, SETTLE_MS);
  };
  // Recursive: rule files in subfolders are loaded too (config/load.ts, ruleFilesIn).
  const watcher = watch(dir, { recursive: true }, schedule);
  watcher.on('error', (err) => log.warn({ err: err.message }, 'watching the rules directory failed; SIGHUP still reloads'));
  process.on('SIGHUP', schedule);
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
      process.off('SIGHUP', schedule);
    },
  };
}
