#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=100
// The published entry: runs the compiled CLI. `npm ci` builds dist/ through the `prepare` script.
//
// The V8 flags above trade a little CPU for a fifth to a third of weir's peak memory
// (docs/benchmarks.md, "the V8 flags weir ships with"): an old generation that V8 compacts when it
// reaches twice what was live at the last compaction, not up to four times — messages waiting for
// their batch's commit outlive a young-generation collection and die soon after, so the old
// generation otherwise fills with them — and 8 MB semi-spaces instead of Node's 16 (4 MB saved
// more but cost a fifth more CPU per 1 KB Pulsar message). V8 reads them only when the heap is
// created, so they are on node's command line: here and in the Dockerfile's ENTRYPOINT
// (test/dockerfile.test.ts keeps the two the same). `node bin/weir.js …` runs without them.
import { main } from '../dist/main.js';
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
