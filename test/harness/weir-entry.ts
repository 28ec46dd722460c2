// Runs the weir CLI from source (the tests' stand-in for bin/weir.js, which runs the build).
import { main } from '../../src/main.js';

process.exitCode = await main(process.argv.slice(2));
