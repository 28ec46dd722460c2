// A sink's service taken down under a running weir, the same way in every outage test: stopped,
// weir reports not ready within `notReadyMs`, and weir stays alive for `ms` (with `whileDown` run
// once a second). The caller starts the service again.
import assert from 'node:assert/strict';
import { waitFor } from './process.js';
import type { WeirProcess } from './weir.js';

export async function takeDown(
  weir: WeirProcess,
  service: { stop(): Promise<void> },
  o: { ms: number; notReadyMs: number; whileDown?: () => Promise<void> },
): Promise<void> {
  await service.stop();
  const downAt = Date.now();
  await waitFor(async () => !(await weir.ready()), o.notReadyMs, '/readyz to report not ready');
  while (Date.now() - downAt < o.ms) {
    assert.equal(weir.svc.proc.exitCode, null, 'weir is still running');
    await o.whileDown?.();
    await new Promise((r) => setTimeout(r, 1000));
  }
}
