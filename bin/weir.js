#!/usr/bin/env node
// The published entry: runs the compiled CLI. `npm ci` builds dist/ through the `prepare` script.
import { main } from '../dist/main.js';
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
