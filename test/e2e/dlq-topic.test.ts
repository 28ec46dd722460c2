// weir dlq over a dead-letter topic (a Kafka or Pulsar sink's dead_letter_topic), for setups
// without PostgreSQL, against real Mosquitto, Kafka and Pulsar: a message the rule's action cannot
// turn into a record is dead-lettered to the topic, `weir dlq list` and `show` read it back, a
// replay before the fix keeps it (a successor, attempts 2), and after the rule is fixed
// `weir dlq replay` stores each exactly once (counted by the broker); a second replay sends
// nothing; `purge --dry-run` deletes nothing and `purge` deletes by tombstones; the replay lock
// (a record of the topic) stops a second replay while the first holds it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { silentLogger } from '../../src/log.js';
import { countTopic, kafkaSinkType, withKafkaAdmin } from '../../src/sinks/kafka/index.js';
import type { KafkaConfig } from '../../src/sinks/kafka/spec.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { pulsarSinkType } from '../../src/sinks/pulsar/index.js';
import { PulsarConfigSpec, type PulsarConfig } from '../../src/sinks/pulsar/spec.js';
import type { LetterStore } from '../../src/dead-letters/letter-store.js';
import { sharedKafka } from '../harness/kafka.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { sharedPulsar } from '../harness/pulsar.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { dlq, listed, publish } from './dlq-cli.js';
import { endSessions } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

interface Broker {
  /** sinks.events in weir.yaml, its dead_letter_topic included. */
  readonly sink: string;
  readonly letterTopic: string;
  /** The rule's action on `events`: `poisoned` cannot become a record, the fix can. */
  readonly action: (fixed: boolean) => string;
  /** A payload that the action refuses, and one it takes. */
  readonly payload: (i: number, poison: boolean) => object;
  /** Records the broker holds on the data topic. */
  readonly dataRecords: () => Promise<number>;
  /** A store on the dead-letter topic, as weir dlq opens it. */
  readonly store: () => LetterStore;
}

async function scenario(b: Broker): Promise<void> {
  const { url: mqttUrl } = await sharedMosquitto();
  const clientId = `weir-dlqt-${randomUUID().slice(0, 8)}`;
  sessions.push([mqttUrl, clientId]);
  const config = `
broker:
  url: ${mqttUrl}
  client_id: ${clientId}
  connections: 1
  share_group: ${clientId}
  reconnect: { min_ms: 100, max_ms: 1000 }
  publisher_clientid: { topic_level: 2 }
sinks:
  events:
${b.sink}    batch: { max_items: 100, max_delay_ms: 10 }
    retry: { initial_ms: 100, max_ms: 1000 }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`;
  const rule = (fixed: boolean) => `id: readings
sql: SELECT clientid AS device, payload.seq AS seq, payload.value AS value, payload.at AS at FROM "dlqt/+/reading"
actions:
  - sink: events
${b.action(fixed)}`;
  const weir = await startWeir({ config, rules: { 'rule.yaml': rule(false) } });
  running.push(weir);
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const cfg = join(weir.dir, 'weir.yaml');

  // Four good readings and two poisoned ones.
  const N = 6;
  const poison = new Set([1, 4]);
  await publish(
    mqttUrl,
    Array.from({ length: N }, (_, i) => ({ topic: `dlqt/d${i}/reading`, payload: JSON.stringify(b.payload(i, poison.has(i))) })),
  );
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 30_000, 'weir to ack every message');
  assert.equal(await weir.stop(), 0);
  running.splice(running.indexOf(weir), 1);
  assert.equal(await b.dataRecords(), N - poison.size, 'the good readings are records');

  const letters = await listed(cfg);
  assert.equal(letters.length, 2, JSON.stringify(letters));
  assert.deepEqual(letters.map((l) => l.topic).sort(), ['dlqt/d1/reading', 'dlqt/d4/reading']);
  assert.ok(
    letters.every((l) => l.rule_id === 'readings' && l.sink === 'events' && l.reason === 'encode_error' && l.attempts === 1 && !l.replay),
    JSON.stringify(letters[0]),
  );
  const table = await dlq(cfg, 'list');
  assert.match(table.stdout, /^id +received +rule +sink +reason +topic +attempts +replay +error/);
  const shown = await dlq(cfg, 'show', letters[0]!.id);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /payload +\d+ bytes, utf-8:\n\{"seq":[14][,}]/);

  // Before the fix: each fails again, and is kept as a new letter written with the mark.
  const failing = await dlq(cfg, 'replay');
  assert.equal(failing.code, 1, `${failing.stdout}${failing.stderr}`);
  assert.match(failing.stdout, /replayed 2 letters: 0 stored, 2 dead-lettered again/);
  const afterFailing = await listed(cfg);
  assert.equal(afterFailing.length, 4);
  const firsts = afterFailing.filter((l) => l.attempts === 1);
  assert.ok(
    firsts.every((l) => l.replay?.outcome === 'dead_lettered'),
    JSON.stringify(firsts),
  );
  assert.deepEqual(
    afterFailing
      .filter((l) => l.attempts === 2)
      .map((l) => l.replay_of)
      .sort(),
    firsts.map((l) => l.id).sort(),
  );

  // The fix, then the replay that stores each exactly once.
  writeFileSync(join(weir.dir, 'rules', 'rule.yaml'), rule(true));
  const fixed = await dlq(cfg, 'replay');
  assert.equal(fixed.code, 0, `${fixed.stdout}${fixed.stderr}`);
  assert.match(fixed.stdout, /replayed 2 letters: 2 stored, 0 dead-lettered again, 0 without output, 0 skipped, 0 failed/);
  assert.equal(await b.dataRecords(), N, 'each dead-lettered message is now one record');
  const again = await dlq(cfg, 'replay');
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`nothing to replay: no pending letter matches in topic ${b.letterTopic} of sink events`));
  assert.equal(await b.dataRecords(), N, 'the second replay wrote nothing');
  assert.deepEqual(await listed(cfg, '--state', 'pending'), []);

  // Purge: a dry run deletes nothing; purge writes tombstones and the letters are gone.
  const dry = await dlq(cfg, 'purge', '--state', 'replayed', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.ok(dry.stdout.startsWith(`would delete 4 dead letters of topic ${b.letterTopic} of sink events (dry run: nothing written)\n`), dry.stdout);
  assert.equal((await listed(cfg)).length, 4, 'a dry run deletes nothing');
  const purged = await dlq(cfg, 'purge', '--state', 'replayed');
  assert.equal(purged.code, 0, purged.stderr);
  assert.match(purged.stdout, /^deleted 4 dead letters from topic /);
  assert.deepEqual(await listed(cfg), []);

  // The replay lock: a second replay stops while the first holds it, and runs once it is released.
  const [first, second] = [b.store(), b.store()];
  try {
    const release = await first.lockForReplay();
    await assert.rejects(second.lockForReplay(), /another weir dlq replay \(.* pid \d+, since .*\) holds the replay lock of topic/);
    const busy = await dlq(cfg, 'replay');
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /^error: another weir dlq replay/);
    await release();
    await (await second.lockForReplay())();
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
}

test('kafka dead_letter_topic: dead-lettered, listed, shown, replayed once after the fix, purged, locked', { timeout: 180_000 }, async () => {
  const { brokers } = await sharedKafka();
  const id = randomUUID().slice(0, 8);
  const dataTopic = `dlqt-data-${id}`;
  const letterTopic = `dlqt-letters-${id}`;
  const kafka: KafkaConfig = {
    brokers,
    client_id: 'weir-dlqt-check',
    acks: -1,
    idempotent: true,
    compression: 'none',
    max_in_flight_requests: 5,
    timeout_ms: 5000,
    connection_timeout_ms: 3000,
  };
  const records = (topic: string) => withKafkaAdmin(kafka, silentLogger, async (admin) => (await countTopic(admin, topic)).records);
  await scenario({
    sink: `    type: kafka
    brokers: ${JSON.stringify(brokers)}
    create_topics: { partitions: 1, replication_factor: 1 }
    dead_letter_topic: ${letterTopic}
    timeout_ms: 5000
`,
    letterTopic,
    // No value: the value template gives nothing, and the record cannot be made. The fix: the whole output.
    action: (fixed) => `    topic: ${dataTopic}\n    key: '\${device}-\${seq}'\n${fixed ? '' : "    value: '${value}'\n"}`,
    payload: (i, poisoned) => (poisoned ? { seq: i } : { seq: i, value: i * 10 }),
    dataRecords: () => records(dataTopic),
    store: () => kafkaSinkType.letterStore!({ ...kafka, dead_letter_topic: letterTopic }, { name: 'events', log: silentLogger })!,
  });
  const described = await withKafkaAdmin(kafka, silentLogger, (admin) =>
    admin.describeConfigs({ resources: [{ type: 2, name: letterTopic, configNames: ['cleanup.policy'] }], includeSynonyms: false }),
  );
  assert.equal(described.resources[0]!.configEntries[0]!.configValue, 'compact', 'weir created the dead-letter topic compacted');
});

test('pulsar dead_letter_topic: dead-lettered, listed, shown, replayed once after the fix, purged, locked', { timeout: 180_000 }, async () => {
  const { serviceUrl, httpUrl } = await sharedPulsar();
  const id = randomUUID().slice(0, 8);
  const dataTopic = `persistent://public/default/dlqt-data-${id}`;
  const letterTopic = `persistent://public/default/dlqt-letters-${id}`;
  const settings = { service_url: serviceUrl, admin_url: httpUrl, topic: dataTopic, connect_timeout_ms: 5000 };
  await scenario({
    sink: `    type: pulsar
    service_url: ${serviceUrl}
    admin_url: ${httpUrl}
    topic: ${dataTopic}
    create_topic: if_missing
    partitions: 1
    dead_letter_topic: ${letterTopic}
    connect_timeout_ms: 5000
`,
    letterTopic,
    // An event time that is no time: the message cannot be made. The fix: no event time.
    action: (fixed) => `    key: '\${device}-\${seq}'\n${fixed ? '' : "    event_time: '${at}'\n"}`,
    payload: (i, poisoned) => ({ seq: i, at: poisoned ? 'not a time' : 1733140000000 + i }),
    dataRecords: async () => (await countPulsarMessages(settings)).total,
    store: () =>
      pulsarSinkType.letterStore!(Value.Default(PulsarConfigSpec, { ...settings, dead_letter_topic: letterTopic }) as PulsarConfig, {
        name: 'events',
        log: silentLogger,
      })!,
  });
});
