// Shutdown is bounded: a sink whose close never returns (a broker that stops answering while
// weir closes its producers) is named in a warning and left behind, and stop() still resolves.
// The sink here is a fake standing in for a hung peer; the real sinks close against real brokers
// in the e2e tests.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import type { SinkConfig } from '../../src/config/types.js';
import { Runtime } from '../../src/core/app/runtime.js';
import type { Sink, SinkType } from '../../src/sinks/types.js';

test('stop: a fake sink whose close never returns is named and left behind; stop still resolves', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-stop-'));
  mkdirSync(join(dir, 'rules'));
  writeFileSync(
    join(dir, 'weir.yaml'),
    `
broker: { url: mqtt://127.0.0.1:1, client_id: weir-stop-test }
sinks:
  db: { type: postgres, url: postgres://127.0.0.1:1/none }
dead_letter: { file: ${join(dir, 'dead.jsonl')} }
`,
  );
  const cfg = loadConfig(join(dir, 'weir.yaml'));
  let closeCalled = false;
  const hangingType: SinkType = {
    ...cfg.sinks.get('db')!.sinkType,
    create: (): Sink => ({
      bind: () => {
        throw new Error('no rules in this test');
      },
      connect: () => new Promise(() => undefined),
      write: () => new Promise(() => undefined),
      probe: async () => undefined,
      classify: () => 'retry',
      close: () => {
        closeCalled = true;
        return new Promise(() => undefined);
      },
    }),
  };
  const sinks = new Map<string, SinkConfig>([['db', { ...cfg.sinks.get('db')!, sinkType: hangingType }]]);
  const lines: Array<{ msg: string; part?: string }> = [];
  const log = pino(
    { level: 'warn' },
    new Writable({
      write: (chunk, _enc, cb) => {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    }),
  );

  const runtime = new Runtime({ ...cfg, sinks }, log);
  await runtime.stop({ graceMs: 100 });

  assert.ok(closeCalled, 'the sink was asked to close');
  const warning = lines.find((l) => l.msg === 'closing did not finish in time; left behind');
  assert.ok(warning, `a warning about the hung close: ${JSON.stringify(lines)}`);
  assert.equal(warning.part, 'sink db');
});
