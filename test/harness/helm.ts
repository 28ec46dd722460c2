// Helm, built once from the Go module proxy (go-build.ts), for the chart's tests
// (test/deploy/helm.test.ts): `helm lint` and `helm template` are Helm's own chart loader, schema
// check and template engine, so what renders here renders the same for `helm install` with that
// version. No cluster is needed or contacted for either.
import { builtGoProgram } from './go-build.js';

export const HELM_VERSION = '4.3.2';
const PACKAGE = 'helm.sh/helm/v4/cmd/helm';

/** The helm binary: from the cache (go-build.ts), or built now (minutes; said on stderr). */
export function builtHelm(): Promise<string> {
  return builtGoProgram({
    name: 'helm',
    key: HELM_VERSION,
    what: `${PACKAGE}@v${HELM_VERSION}`,
    // The version as Helm's Makefile stamps it (`go install` alone leaves its source's "v4.3"):
    // `helm version` and .Capabilities.HelmVersion then name the release.
    args: ['install', '-trimpath', '-ldflags', `-X helm.sh/helm/v4/internal/version.version=v${HELM_VERSION}`, `${PACKAGE}@v${HELM_VERSION}`],
    // Helm's go.mod as published, whatever GOFLAGS the machine sets.
    env: { GOFLAGS: '-mod=mod -buildvcs=false' },
  });
}
