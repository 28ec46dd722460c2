// npm run bench -- <name>: runs one benchmark (or `all`). Benchmarks print their figures and
// write bench/results/<name>.json; they are never part of the test suite.
const BENCHES: Record<string, () => Promise<object>> = {
  pg: async () => (await import('./pg.js')).benchPg(),
  'pg-timescaledb': async () => (await import('./pg.js')).benchPg('pg-timescaledb'),
  kafka: async () => (await import('./kafka.js')).benchKafka(),
  pulsar: async () => (await import('./pulsar.js')).benchPulsar(),
  republish: async () => (await import('./republish.js')).benchRepublish(),
  'pulsar-codecs': async () => (await import('./pulsar-codecs.js')).benchPulsarCodecs(),
  ingest: async () => (await import('./ingest.js')).benchIngest(),
  rules: async () => (await import('./rules.js')).benchRules(),
  sequence: async () => (await import('./sequence.js')).benchSequence(),
  partitioner: async () => (await import('./partitioner.js')).benchPartitioner(),
  standalone: async () => (await import('./standalone.js')).benchStandalone(),
  backlog: async () => (await import('./backlog.js')).benchBacklog(),
  topics: async () => (await import('./topics.js')).benchTopics(),
  console: async () => (await import('./console.js')).benchConsole(),
};

const name = process.argv[2] ?? '';
if (!(name in BENCHES) && name !== 'all') {
  process.stderr.write(`usage: npm run bench -- <${[...Object.keys(BENCHES), 'all'].join('|')}>\n`);
  process.exit(2);
}
for (const [n, run] of Object.entries(BENCHES)) {
  if (name === 'all' || name === n) await run();
}
process.exit(0);
