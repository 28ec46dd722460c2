// A directory laid out and updated as the kubelet does a mounted ConfigMap (its AtomicWriter), so
// a test can do to weir's rules_dir what Kubernetes does to it:
//
//   rules/
//     ..2026_12_05_13_40_01.3175021468/telemetry.yaml    the files of one version
//     ..data -> ..2026_12_05_13_40_01.3175021468         the current version
//     telemetry.yaml -> ..data/telemetry.yaml            what a reader sees, through ..data
//
// An update writes the new version into a new timestamped directory, points a `..data_tmp`
// symlink at it, renames `..data_tmp` over `..data` (the one atomic step: a reader sees the old
// set or the new set, never a mix), adds the visible symlinks of new keys, removes those of keys
// gone, and deletes the old version's directory.
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export class ConfigMapVolume {
  private version = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** The timestamped directory `..data` points at now, if any. */
  current(): string | undefined {
    return existsSync(join(this.dir, '..data')) ? readlinkSync(join(this.dir, '..data')) : undefined;
  }

  /** Makes `files` (name → text) the ConfigMap's data, in the kubelet's order of steps. */
  write(files: Record<string, string>): void {
    const old = this.current();
    const stamp = new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*$/, '');
    const version = `..${stamp}.${process.pid}${String(++this.version).padStart(4, '0')}`;
    mkdirSync(join(this.dir, version), { mode: 0o755 });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.dir, version, name), text, { mode: 0o644 });
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    const visible = readdirSync(this.dir).filter((n) => !n.startsWith('..'));
    for (const name of Object.keys(files)) if (!visible.includes(name)) symlinkSync(join('..data', name), join(this.dir, name));
    for (const name of visible) if (!(name in files)) rmSync(join(this.dir, name));
    if (old) rmSync(join(this.dir, old), { recursive: true });
  }
}
