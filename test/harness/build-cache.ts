// Builds the harness caches (mosquitto-build.ts in .it/, go-build.ts in ~/.cache/weir/go/) appear whole or not at all:
// a build goes to `<cache>.partial-<pid>`, then is renamed into place in one step.
import { existsSync, renameSync, rmSync } from 'node:fs';

/** Renames a finished build into its cache; when another run put its copy there first, that one stays. */
export function publishBuild(partial: string, cache: string, bin: string): void {
  try {
    renameSync(partial, cache);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(bin)) throw err;
  }
}
