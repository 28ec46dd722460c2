// Installs a Debian package the tests need when its binary is missing and we are root (as in CI);
// otherwise says exactly what to install.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

let updated = false;

export async function ensureDebianPackage(pkg: string, binaries: string[]): Promise<void> {
  if (binaries.some((b) => existsSync(b))) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`${pkg} is needed by the integration tests and is not installed: run 'sudo apt-get install -y ${pkg}' (looked for ${binaries.join(', ')})`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // apt's output goes to stderr: a harness's stdout carries only the one JSON line that says it is
  // ready (test/run.mjs reads the first line), and dpkg prints 'Selecting previously unselected…'.
  const stdio: ['ignore', number, 'inherit'] = ['ignore', 2, 'inherit'];
  if (!updated) {
    execFileSync('apt-get', ['update', '-qq'], { stdio, env });
    updated = true;
  }
  execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio, env });
  if (!binaries.some((b) => existsSync(b))) throw new Error(`installed ${pkg} but found none of ${binaries.join(', ')}`);
}
