#!/usr/bin/env node
// The container image's HEALTHCHECK: `weir health` (src/cli/health.ts) without loading the rest of
// weir, so a probe every 10 s costs a tenth of a second of CPU rather than the half second of all
// the commands' imports. Docker reads 0 as healthy and 1 as unhealthy and reserves 2, so a usage
// error is 1 here too.
import { healthCommand } from '../dist/cli/health.js';
process.exitCode = (await healthCommand.run(process.argv.slice(2))) === 0 ? 0 : 1;
