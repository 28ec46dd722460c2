// The message path without sockets, for telling apart what N rules cost (docs/benchmarks.md, 100
// rules each matching one): weir's compiled Pipeline.handle -> SinkRunner -> the PostgreSQL
// sink's encoding into rows -> a write that drops the batch, in this process, on the shipped
// weir.yaml with N copies of the shipped rule (rule k reads device/+/telemetry<k>, as
// STANDALONE_RULES in bench/standalone.ts). Prints this process's CPU per message (all threads,
// the garbage collector's included) for each round, after 100,000 messages of warm-up.
//
//   npm run build && taskset -c 1 node bench/pipeline-rules.mjs <rules> [rounds] [messages]
//
// Diagnostic knobs (bench-only; they make the rules share what they normally own):
//   PIPELINE_RUN=<n>      n consecutive messages to one rule instead of each to the next
//   PIPELINE_SHARE=a,b    every rule uses rule 0's counters / encoder (encode) / compiled SQL
//                         (eval; the pipeline does not re-check FROM) instead of its own
// Nothing is written to bench/results: compare rounds printed side by side, under the CPU lock.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../dist/config/load.js';
import { CallbackSettlement } from '../dist/core/ingest/ack-path.js';
import { Pipeline } from '../dist/core/path/pipeline.js';
import { SinkRunner } from '../dist/core/path/sink-runner.js';
import { telemetrySample } from '../dist/embedded/devices.js';
import { createLogger } from '../dist/log.js';
import { createMetrics } from '../dist/metrics/names.js';
import { compileSql } from '../dist/rules/index.js';
import { BENCH_DISCARD } from './discard-sink.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const RULES = Number(process.argv[2] ?? 1);
const ROUNDS = Number(process.argv[3] ?? 3);
const N = Number(process.argv[4] ?? 100_000);
const RUN = Number(process.env.PIPELINE_RUN ?? 1);
const SHARE = (process.env.PIPELINE_SHARE ?? '').split(',').filter(Boolean);
const DEVICES = 1_000;
/** The shipped max_unacked times connections: what weir holds at most. */
const IN_FLIGHT = 8_000;
/** Messages handed over per turn of the event loop, about one socket read's worth. */
const CHUNK = 400;

const dir = mkdtempSync(join(tmpdir(), 'weir-pipeline-rules-'));
mkdirSync(join(dir, 'rules'));
const rule = parse(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8'));
for (let k = 0; k < RULES; k++) {
  const sql = RULES > 1 ? rule.sql.replace('FROM "device/+/telemetry"', `FROM "device/+/telemetry${k}"`) : rule.sql;
  writeFileSync(join(dir, 'rules', `telemetry-${k}.yaml`), stringify({ ...rule, sql, id: `${rule.id}_${k}`, tests: undefined }));
}
copyFileSync(join(ROOT, 'weir.yaml'), join(dir, 'weir.yaml'));
const cfg = loadConfig(join(dir, 'weir.yaml'));
const log = createLogger('warn');
const metrics = createMetrics();
const dlq = {
  put: async () => {
    throw new Error('no dead letters expected');
  },
};
const runners = new Map();
for (const sc of cfg.sinks.values()) {
  const sink = BENCH_DISCARD.create(sc.settings, { name: sc.name, log, instance: 'bench' });
  runners.set(sc.name, new SinkRunner(sc, sink, dlq, metrics, log, new AbortController().signal));
}
const pipeline = new Pipeline(cfg.broker, 'bench', runners, dlq, metrics, log);
pipeline.setRules(cfg.rules);
const live = pipeline.liveRules;
const first = live[0];
const h0 = first.actions[0].handle;
const evalAll = SHARE.includes('eval') ? compileSql(first.cfg.sql).evaluateRouted : undefined;
for (const r of live) {
  if (SHARE.includes('counters')) r.counters = first.counters;
  if (evalAll) r.cfg.compiled.evaluateRouted = evalAll;
  for (const a of r.actions) {
    if (SHARE.includes('counters')) Object.assign(a.handle, { counters: h0.counters, ruleCounters: h0.ruleCounters });
    if (SHARE.includes('encode')) Object.assign(a.handle, { bound: h0.bound });
  }
}

const ts = Date.now();
const messages = Array.from({ length: N }, (_, i) => {
  const k = i + 1;
  const device = i % DEVICES;
  const topic = RULES > 1 ? `device/${device}/telemetry${Math.floor(k / RUN) % RULES}` : `device/${device}/telemetry`;
  return { topic, payload: telemetrySample(String(device), k, 200, ts) };
});
let settled = 0;
const settle = () => {
  settled++;
};
const tick = () => new Promise((r) => setImmediate(r));
async function round(n) {
  settled = 0;
  for (let sent = 0; sent < n; ) {
    for (const end = Math.min(n, sent + CHUNK); sent < end; sent++) {
      const m = messages[sent % N];
      // A fresh topic string and payload per message, as a socket read gives them; one
      // settlement per message, as the ack window's Slot is.
      pipeline.handle(
        { topic: m.topic.slice(0), payload: Buffer.from(m.payload), qos: 1, retain: false, dup: false, properties: undefined, receivedAt: ts },
        new CallbackSettlement(settle),
      );
    }
    while (sent - settled > IN_FLIGHT) await new Promise((r) => setTimeout(r, 1));
    await tick();
  }
  while (settled < n) await new Promise((r) => setTimeout(r, 1));
}

await round(100_000);
const us = [];
for (let r = 0; r < ROUNDS; r++) {
  const c0 = process.cpuUsage();
  await round(N);
  const c = process.cpuUsage(c0);
  us.push(((c.user + c.system) / N).toFixed(2));
}
const stored = metrics.sinkSuccess.labels('tsdb', live[0].cfg.id).value;
process.stdout.write(
  `${RULES} rule(s)${RUN > 1 ? `, runs of ${RUN}` : ''}${SHARE.length ? `, sharing ${SHARE.join('+')}` : ''}: µs/msg ${us.join(' ')} (rule 0 stored ${stored})\n`,
);
process.exit(0);
