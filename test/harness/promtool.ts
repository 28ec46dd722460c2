// Prometheus's promtool, built once from the Go module proxy, for the tests of the shipped alert
// rules (deploy/prometheus/alerts.yml): `promtool check rules` and `promtool test rules` use
// Prometheus's own rule loader and PromQL engine, so what passes here loads and evaluates the same
// in a Prometheus of that version.
//
// Prometheus v3.16.0 is the Go module version v0.316.0 (its tags v3.x.y are published as
// v0.3xx.y). The build is `go install` with GOBIN at the cache (go-build.ts, the one mechanism for the
// Go programs the tests run). `-tags remove_all_sd` leaves out the service-discovery plugins
// (Prometheus's own build tag, plugins/*.go): the cloud SDKs they pull in (AWS, Azure, GCE,
// Kubernetes, …) were most of the build and play no part in checking or testing rules. Measured
// with an empty build cache (modules already downloaded), on the 2-core machine at load average
// 10-17: 660 s wall, 228 s of CPU. The binary is cached in ~/.cache/weir/go/promtool-<version>/.
import { builtGoProgram } from './go-build.js';

export const PROMETHEUS_VERSION = '3.16.0';
const MODULE_VERSION = 'v0.316.0';
const PACKAGE = 'github.com/prometheus/prometheus/cmd/promtool';

/** The promtool binary: from the cache, or built now (minutes; said on stderr). */
export function builtPromtool(): Promise<string> {
  return builtGoProgram({
    name: 'promtool',
    key: PROMETHEUS_VERSION,
    what: `${PACKAGE}@${MODULE_VERSION}`,
    args: ['install', '-tags', 'remove_all_sd', `${PACKAGE}@${MODULE_VERSION}`],
  });
}
