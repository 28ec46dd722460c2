// weir's own validator of rendered manifests (test/deploy/kube-validate/main.go): every object
// decoded strictly into its Kubernetes API type (k8s.io/api, the release in its go.mod) or the
// Prometheus Operator's, unknown fields and unknown kinds refused. Built once per version of its
// sources (go-build.ts): the cache key is a hash of main.go, go.mod and go.sum.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtGoProgram } from './go-build.js';
import { ROOT } from './weir.js';

const DIR = join(ROOT, 'test/deploy/kube-validate');

/** The kube-validate binary for the sources as they are now. */
export function builtKubeValidate(): Promise<string> {
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(join(DIR, f)));
  return builtGoProgram({
    name: 'kube-validate',
    key: hash.digest('hex').slice(0, 12),
    what: 'test/deploy/kube-validate',
    args: ['build', '-trimpath', '-o', '{out}/kube-validate', '.'],
    cwd: DIR,
    env: { GOFLAGS: '-mod=readonly -buildvcs=false' },
  });
}
