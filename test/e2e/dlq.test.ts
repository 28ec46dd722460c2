// weir dlq against real Mosquitto and PostgreSQL: messages whose rows a table refuses are
// dead-lettered by a running weir, the table is fixed, and `weir dlq replay` stores each of them
// exactly once, through the same rules, sink code and ledger as the live path, so `weir reconcile`
// agrees. A replay that fails again keeps the letter (a new one, attempts + 1); a second replay
// sends nothing. The JSON-lines file store, show, purge and the usage errors too.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir, waitFor } from '../harness/process.js';
import { runCli, type WeirProcess } from '../harness/weir.js';
import { dlq, listed, publish, READINGS_DDL, readingsRule, startOnTable } from './dlq-cli.js';
import { endSessions, query } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

/** startOnTable with the given dead-letter store; its weir and session are ended after the tests. */
async function start(clientId: string, ddl: string, deadLetter: string, rule: string) {
  const started = await startOnTable(clientId, ddl, rule, (c) => c.replace('dead_letter: { sink: tsdb }', `dead_letter: ${deadLetter}`));
  running.push(started.weir);
  sessions.push([started.mqttUrl, clientId]);
  return started;
}

test('letters a table refused are replayed once the table is fixed: each stored exactly once, the ledger reconciles, a second replay sends nothing', {
  timeout: 120_000,
}, async () => {
  const { mqttUrl, pgUrl, weir, cfg } = await start('weir-dlq-pg', READINGS_DDL, '{ sink: tsdb }', readingsRule('dlq'));

  // Every third reading is hotter than the CHECK allows: 20 of 60 rows are refused.
  const N = 60;
  const messages = Array.from({ length: N }, (_, i) => ({
    topic: `dlq/d${i % 4}/reading`,
    payload: JSON.stringify({ seq: i, temp: i % 3 === 0 ? 75.5 : 20 }),
  }));
  await publish(mqttUrl, messages);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 30_000, 'weir to ack every message');
  assert.equal(await weir.stop(), 0);
  const [rows] = await query<{ n: string }>(pgUrl, 'SELECT count(*) AS n FROM readings');
  assert.equal(Number(rows!.n), 40, 'the plausible readings are stored');

  const letters = await listed(cfg);
  assert.equal(letters.length, 20, 'one letter per refused row');
  assert.ok(
    letters.every((l) => l.reason === 'rejected' && l.rule_id === 'readings' && l.sink === 'tsdb' && l.attempts === 1 && !l.replay),
    JSON.stringify(letters[0]),
  );
  assert.match(letters[0]!.error, /plausible/);
  const table = await dlq(cfg, 'list');
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^id +received +rule +sink +reason +topic +attempts +replay +error/);
  assert.equal(table.stdout.match(/ pending /g)?.length, 20);

  assert.equal((await listed(cfg, '--since', '1h', '--rule', 'readings', '--sink', 'tsdb', '--reason', 'rejected')).length, 20, 'the filters select them');
  assert.deepEqual(await listed(cfg, '--until', '1h'), [], 'none received over an hour ago');
  const dry = await dlq(cfg, 'replay', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^would replay 20 dead letters of table weir_dead_letter of sink tsdb \(dry run: nothing written\)\n/);
  assert.ok(
    (await listed(cfg)).every((l) => !l.replay),
    'a dry run marks nothing',
  );

  // Replayed before the fix: each fails again, and is not lost: a new letter, attempt 2.
  const failing = await dlq(cfg, 'replay');
  assert.equal(failing.code, 1, `${failing.stdout}${failing.stderr}`);
  assert.match(failing.stdout, /replayed 20 letters: 0 stored, 20 dead-lettered again/);
  const afterFailing = await listed(cfg);
  assert.equal(afterFailing.length, 40);
  const firsts = afterFailing.filter((l) => l.attempts === 1);
  const seconds = afterFailing.filter((l) => l.attempts === 2);
  assert.equal(firsts.length, 20);
  assert.ok(firsts.every((l) => l.replay?.outcome === 'dead_lettered' && /plausible/.test(l.replay.note ?? '')));
  assert.deepEqual(seconds.map((l) => l.replay_of).sort(), firsts.map((l) => l.id).sort(), 'each new letter names the letter it came from');
  assert.ok(seconds.every((l) => !l.replay && l.reason === 'rejected'));

  // The fix, then the replay that stores them.
  await query(pgUrl, 'ALTER TABLE readings DROP CONSTRAINT plausible');
  const fixed = await dlq(cfg, 'replay', '--rate', '500/s');
  assert.equal(fixed.code, 0, `${fixed.stdout}${fixed.stderr}`);
  assert.match(fixed.stdout, /replayed 20 letters: 20 stored, 0 dead-lettered again, 0 without output, 0 skipped, 0 failed/);

  const stored = await query<{ device_id: string; seq: string; temp: number }>(pgUrl, 'SELECT device_id, seq, temp FROM readings');
  assert.equal(stored.length, N, 'every message is a row');
  const keys = new Set(stored.map((r) => `${r.device_id}/${r.seq}`));
  assert.equal(keys.size, N, 'each (device_id, seq) once');
  for (const [i, m] of messages.entries()) assert.ok(keys.has(`${m.topic.split('/')[1]}/${i}`), `reading ${i} stored, its device taken from the topic as live`);
  assert.equal(stored.filter((r) => r.temp === 75.5).length, 20);

  const again = await dlq(cfg, 'replay');
  assert.equal(again.code, 0);
  assert.match(again.stdout, /nothing to replay/);
  assert.equal((await query<{ n: string }>(pgUrl, 'SELECT count(*) AS n FROM readings'))[0]!.n, String(N), 'the second replay wrote nothing');

  const final = await listed(cfg);
  assert.equal(final.filter((l) => l.replay?.outcome === 'stored').length, 20, 'list shows the replayed letters as stored');
  assert.deepEqual(await listed(cfg, '--state', 'pending'), []);
  assert.match((await dlq(cfg, 'list', '--state', 'replayed', '--limit', '5')).stdout, /showing the first 5 of 40/);

  const rec = await runCli(['reconcile', '-c', cfg]);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(rec.stdout, /readings +tsdb +readings .* 60 +60 +0\n/);

  const shown = await dlq(cfg, 'show', firsts[0]!.id);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /payload +\d+ bytes, utf-8:\n\{"seq":\d+,"temp":75\.5\}/);
  assert.match(shown.stdout, /replay +dead_lettered at .*plausible/);
  const unknown = await dlq(cfg, 'show', '999999');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^error: no dead letter with id '999999' in table weir_dead_letter of sink tsdb\n$/);
});

test('the JSON-lines file store: list, show (UTF-8 and not), purge --dry-run then purge, replay once fixed', { timeout: 120_000 }, async () => {
  const rule = `id: notes
sql: SELECT clientid AS device_id, payload.level AS level FROM "note/+"
actions:
  - sink: tsdb
    table: notes
    columns: { device_id: '\${device_id}', level: '\${level}' }
`;
  const { mqttUrl, pgUrl, weir, cfg } = await start('weir-dlq-file', 'CREATE TABLE notes (device_id text, level smallint)', '{ file: letters.jsonl }', rule);
  const file = join(weir.dir, 'letters.jsonl');

  const notUtf8 = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
  await publish(mqttUrl, [
    // A smallint holds up to 32767: the two larger levels are refused (22003, out of range).
    { topic: 'note/a', payload: '{"level":5}' },
    { topic: 'note/b', payload: '{"level":70000}' },
    { topic: 'note/c', payload: '{"level":99999}' },
    { topic: 'note/d', payload: 'not json' },
    { topic: 'note/e', payload: notUtf8 },
  ]);
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= 5, 30_000, 'weir to ack every message');
  assert.equal(await weir.stop(), 0);

  const letters = await listed(cfg);
  assert.deepEqual(letters.map((l) => `${l.topic} ${l.reason}`).sort(), [
    'note/b rejected',
    'note/c rejected',
    'note/d invalid_payload',
    'note/e invalid_payload',
  ]);
  const binary = letters.find((l) => l.topic === 'note/e')!;
  const shown = await dlq(cfg, 'show', binary.id);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`payload +4 bytes, base64:\\n${notUtf8.toString('base64').replace(/[+/]/g, '\\$&')}\\n`));
  const asJson = JSON.parse((await dlq(cfg, 'show', binary.id, '--json')).stdout) as { payload_encoding: string; payload_base64: string };
  assert.equal(asJson.payload_encoding, 'base64');
  assert.ok(Buffer.from(asJson.payload_base64, 'base64').equals(notUtf8), 'the payload byte for byte');
  const text = await dlq(cfg, 'show', letters.find((l) => l.topic === 'note/d')!.id);
  assert.match(text.stdout, /payload +8 bytes, utf-8:\nnot json\n/);
  const missing = await dlq(cfg, 'show', 'feedfacecafe');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, `error: no dead letter with id 'feedfacecafe' in file ${file}\n`);

  const fallback = await dlq(cfg, 'list', '--fallback');
  assert.equal(fallback.code, 0, fallback.stderr);
  assert.match(fallback.stdout, /^no dead letters match in file .*weir-dead-letter-fallback\.jsonl\n$/);

  const before = readFileSync(file, 'utf8');
  const dry = await dlq(cfg, 'purge', '--reason', 'invalid_payload', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^would delete 2 dead letters of file .*letters\.jsonl \(dry run: nothing written\)\n/);
  assert.match(dry.stdout, /note\/d/);
  assert.equal(readFileSync(file, 'utf8'), before, 'a dry run changes nothing');
  const purged = await dlq(cfg, 'purge', '--reason', 'invalid_payload');
  assert.equal(purged.code, 0, purged.stderr);
  assert.match(purged.stdout, /^deleted 2 dead letters from file /);
  const left = await listed(cfg);
  assert.deepEqual(left.map((l) => l.topic).sort(), ['note/b', 'note/c']);
  assert.deepEqual(
    left.map((l) => l.id).sort(),
    letters
      .filter((l) => l.reason === 'rejected')
      .map((l) => l.id)
      .sort(),
    'ids survive a purge of other lines',
  );

  await query(pgUrl, 'ALTER TABLE notes ALTER COLUMN level TYPE integer');
  const replayed = await dlq(cfg, 'replay');
  assert.equal(replayed.code, 0, `${replayed.stdout}${replayed.stderr}`);
  assert.match(replayed.stdout, /replayed 2 letters: 2 stored/);
  const notes = await query<{ device_id: string; level: number }>(pgUrl, 'SELECT device_id, level FROM notes ORDER BY device_id');
  assert.deepEqual(notes, [
    { device_id: 'a', level: 5 },
    { device_id: 'b', level: 70000 },
    { device_id: 'c', level: 99999 },
  ]);
  assert.match((await dlq(cfg, 'replay')).stdout, /nothing to replay/);
  assert.ok((await listed(cfg)).every((l) => l.replay?.outcome === 'stored'));
  assert.ok(existsSync(`${file}.replayed`), 'replay state in the sidecar file');
  assert.equal(readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 2, 'the letters file itself is only appended to by weir');

  // Purge by state: what was replayed goes, and with it its marks.
  assert.match((await dlq(cfg, 'purge', '--state', 'replayed')).stdout, /^deleted 2 dead letters/);
  assert.deepEqual(await listed(cfg), []);
  assert.equal(readFileSync(`${file}.replayed`, 'utf8'), '');
});

test('usage errors: one line, exit 2; no store: exit 1; every subcommand has --help', { timeout: 180_000 }, async () => {
  const dir = tempDir('dlq-usage');
  mkdirSync(join(dir, 'rules'));
  writeFileSync(join(dir, 'weir.yaml'), 'sinks: {}\n');
  const cfg = join(dir, 'weir.yaml');
  const usage: Array<[string[], RegExp]> = [
    [['list', '--since', 'yesterday'], /^error: --since: 'yesterday' is not a time/],
    [['list', '--until', '2024-13-45'], /^error: --until: '2024-13-45' is not a time/],
    [['list', '--limit', '0'], /^error: --limit takes a whole number of letters, from 1 to 999999999, not '0'\n/],
    [['list', '--state', 'done'], /^error: --state is pending or replayed/],
    [['show'], /^error: which letter\?/],
    [['replay', '--rate', '0'], /^error: --rate takes a number of letters per second, above 0 \(e\.g\. 200 or 200\/s\), not '0'\n/],
    [['purge'], /^error: purge needs a filter, or --all/],
    [['purge', '--all', '--rule', 'x'], /^error: --all with a filter/],
    [['frob'], /^error: unknown subcommand 'frob'/],
  ];
  // Independent CLI runs, each a process start: at once, to keep the file's run short.
  const results = await Promise.all(usage.map(([args]) => dlq(cfg, ...args)));
  for (const [i, [args, expected]] of usage.entries()) {
    assert.equal(results[i]!.code, 2, `${args.join(' ')}: ${results[i]!.stderr}`);
    assert.match(results[i]!.stderr, expected, args.join(' '));
  }
  const none = await dlq(cfg, 'list');
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^error: no dead-letter store in .*weir\.yaml .*weir-dead-letter\.jsonl\n$/);
  const subs = ['list', 'show', 'replay', 'purge'];
  const helps = await Promise.all(subs.map((sub) => runCli(['dlq', sub, '--help'])));
  for (const [i, sub] of subs.entries()) {
    assert.equal(helps[i]!.code, 0);
    assert.match(helps[i]!.stdout, new RegExp(`^usage: weir dlq ${sub}`));
  }
  const top = await runCli(['dlq', '--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /list .*\n.*show ID .*\n.*replay .*\n.*purge /);
});

test('a broken rule file: list, show and purge still read the letters (warning about the rule), replay refuses (it needs the rules)', {
  timeout: 60_000,
}, async () => {
  const dir = tempDir('dlq-broken-rule');
  mkdirSync(join(dir, 'rules'));
  const file = join(dir, 'letters.jsonl');
  writeFileSync(join(dir, 'weir.yaml'), `sinks: {}\ndead_letter: { file: ${file} }\n`);
  const letter = {
    rule_id: 'readings',
    sink: '',
    reason: 'rule_exception',
    error: 'payload.x on a payload that is not JSON',
    topic: 'dlq/d1/reading',
    payload_base64: Buffer.from('not json').toString('base64'),
    received_at: new Date().toISOString(),
    attempts: 1,
  };
  writeFileSync(file, `${JSON.stringify(letter)}\n`);
  writeFileSync(join(dir, 'rules/readings.yaml'), 'id: readings\nsql: SELECT FROM WHERE\nactions: []\n');
  const cfg = join(dir, 'weir.yaml');

  const list = await dlq(cfg, 'list', '--json');
  assert.equal(list.code, 0, list.stderr);
  const letters = JSON.parse(list.stdout) as Array<{ id: string; rule_id: string; reason: string }>;
  assert.deepEqual(
    letters.map((l) => [l.rule_id, l.reason]),
    [['readings', 'rule_exception']],
  );
  assert.match(list.stderr, /^warning: .*rules\/readings\.yaml:\d+:\d+: /m);
  assert.match(
    list.stderr,
    /^warning: \d+ error\(s\) in the rules of .*: weir run would not start with them \(weir check shows them\); read on without those rules$/m,
  );
  const show = await dlq(cfg, 'show', letters[0]!.id);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /not json/);
  const purge = await dlq(cfg, 'purge', '--all', '--dry-run');
  assert.equal(purge.code, 0, purge.stderr);
  assert.match(purge.stdout, /^would delete 1 dead letter /);

  const replay = await dlq(cfg, 'replay');
  assert.equal(replay.code, 1);
  assert.match(replay.stderr, /^error: .*rules\/readings\.yaml:\d+:\d+: /m);
  assert.match(replay.stderr, /nothing was started/);
});
