// What a message costs more when a fleet publishes on more distinct topics (npm run bench --
// topics), in ns per message on one core, for 1,000 and 100,000 device topics:
//   (a) the topic router (src/core/path/router.ts): the shipped rule's filter device/+/telemetry, and
//       100 rules device/+/telemetry<k> with each topic matching one;
//   (b) JSON.parse of the 200 B telemetry payload, which carries the device's id: V8 internalizes
//       a JSON string value shorter than 10 characters (its string table, one entry per distinct
//       id, looked up on every parse), so the bench's ids ("12345") are parsed beside ids of 15
//       characters ("device-00012345"), which it does not.
// Each topic and payload is decoded from bytes before its lookup or parse, as the packet reader
// does, so nothing finds a string it has hashed before. The cases alternate; three windows each,
// best kept. Writes bench/results/topics.json.
import { TopicRouter } from '../src/core/path/router.js';
import { telemetrySample } from '../src/embedded/devices.js';
import { machine, printTable, writeResult } from './report.js';

const LOOKUPS = Number(process.env.TOPICS_LOOKUPS ?? 2_000_000);
const PARSES = Number(process.env.TOPICS_PARSES ?? 1_000_000);
const FLEETS = [1_000, 100_000];

interface Case {
  readonly name: string;
  readonly devices: number;
  /** One window: ns per message. */
  run(): number;
}

function routerCase(devices: number, rules: number): Case {
  const router = new TopicRouter<number>();
  for (let k = 0; k < rules; k++) router.add(rules > 1 ? `device/+/telemetry${k}` : 'device/+/telemetry', k);
  const topics = Array.from({ length: devices }, (_, d) => Buffer.from(rules > 1 ? `device/${d}/telemetry${d % rules}` : `device/${d}/telemetry`));
  return {
    name: `(a) router, ${rules} rule(s)`,
    devices,
    run: () => {
      let matched = 0;
      const t = process.hrtime.bigint();
      for (let i = 0; i < LOOKUPS; i++) {
        const b = topics[i % devices]!;
        matched += router.match(b.toString('utf8', 0, b.length)).length;
      }
      const ns = Number(process.hrtime.bigint() - t) / LOOKUPS;
      if (matched !== LOOKUPS) throw new Error(`${matched} matches in ${LOOKUPS} lookups: every topic matches one rule`);
      return ns;
    },
  };
}

function parseCase(devices: number, id: (d: number) => string, label: string): Case {
  const payloads = Array.from({ length: devices }, (_, d) => telemetrySample(id(d), 1, 200, 1733140000000));
  return {
    name: `(b) JSON.parse, ids ${label}`,
    devices,
    run: () => {
      let seqs = 0;
      const t = process.hrtime.bigint();
      for (let i = 0; i < PARSES; i++) seqs += (JSON.parse(payloads[i % devices]!.toString()) as { seq: number }).seq;
      const ns = Number(process.hrtime.bigint() - t) / PARSES;
      if (seqs !== PARSES) throw new Error('a payload parsed wrong');
      return ns;
    },
  };
}

export async function benchTopics(): Promise<object> {
  const cases = FLEETS.flatMap((n) => [
    routerCase(n, 1),
    routerCase(n, 100),
    parseCase(n, String, 'as the benchmarks\' ("12345", internalized)'),
    parseCase(n, (d) => `device-${String(d).padStart(8, '0')}`, '"device-00012345" (not internalized)'),
  ]);
  const best = cases.map(() => Number.POSITIVE_INFINITY);
  for (let w = 0; w < 3; w++) for (const [i, c] of cases.entries()) best[i] = Math.min(best[i]!, c.run());
  const rows = [...new Set(cases.map((c) => c.name))].map((name) => {
    const ns = (devices: number) => best[cases.findIndex((c) => c.name === name && c.devices === devices)]!;
    return { case: name, 'ns, 1,000 topics': ns(1_000).toFixed(0), 'ns, 100,000 topics': ns(100_000).toFixed(0), '+ns': (ns(100_000) - ns(1_000)).toFixed(0) };
  });
  printTable(rows);
  const result = {
    bench: 'topics',
    command: 'npm run bench -- topics',
    at: new Date().toISOString(),
    machine: machine(),
    lookups_per_window: LOOKUPS,
    parses_per_window: PARSES,
    cases: cases.map((c, i) => ({ case: c.name, topics: c.devices, ns_per_message: Math.round(best[i]!) })),
  };
  writeResult('topics', result);
  return result;
}
