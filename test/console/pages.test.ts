// The console in a real browser (Debian's chromium, test/harness/browser.ts) against a weir process
// on real Mosquitto and PostgreSQL. Every page loads with no console error and asks nothing of any
// host but weir's; a screenshot of each is taken (into docs/console/ with WEIR_SCREENSHOTS=1, `npm
// run screenshots`; else a temporary directory, so a test run leaves the tree as it was). With the traffic stopped (quiesced),
// each counter the Overview and Rules pages show equals /metrics; Try it shows the outputs
// `weir eval` prints for the same input, an SQL error at its line and column, and the row a running
// rule's action would write (without writing it); a trace shows a message published after it
// started; a letter replayed from the page is stored in the table; a purge asks first, then removes
// the letter; at 380 px no page scrolls sideways; a hidden tab makes no request; a public port
// without credentials gets no payloads and is told why.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import mqtt from 'mqtt';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../console/build.js';
import { TestBrowser, type WatchedPage } from '../harness/browser.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir, waitFor } from '../harness/process.js';
import { ROOT, startWeir, sumMetric, type WeirProcess } from '../harness/weir.js';
import { endSessions, query, telemetryFiles } from '../e2e/fixtures.js';

const CLIENT = 'weir-console';
const SHOTS = process.env.WEIR_SCREENSHOTS === '1' ? join(ROOT, 'docs/console') : tempDir('console-shots');
const VIEWS = ['overview', 'rules', 'sinks', 'reconcile', 'try', 'trace', 'dead-letters'] as const;

/** readings: a CHECK refuses temp ≥ 50 (dead letters to replay); no temp: no result. */
const READINGS_RULE = `id: readings
sql: |
  SELECT clientid AS device_id, payload.seq AS seq, payload.temp AS temp
  FROM "lab/+/reading"
  WHERE is_not_null(payload.temp)
actions:
  - sink: tsdb
    table: readings
    columns: { device_id: '\${device_id}', seq: '\${seq}', temp: '\${temp}' }
`;
const READINGS_DDL =
  'CREATE TABLE readings (device_id text NOT NULL, seq bigint NOT NULL, temp double precision CONSTRAINT plausible CHECK (temp < 50), PRIMARY KEY (device_id, seq))';

/** The counters the Rules page shows, under EMQX's names. */
const RULE_COUNTERS = ['matched', 'passed', 'failed', 'failed.exception', 'failed.no_result', 'actions.total', 'actions.success', 'actions.failed'];

/** EMQX's name → weir's metric: `failed.no_result` → weir_rule_failed_no_result_total, `actions.total` → weir_rule_actions_total. */
function ruleMetric(name: string): string {
  return `weir_rule_${name.replace(/\.total$/, '').replace('.', '_')}_total`;
}

let weir: WeirProcess;
let browser: TestBrowser;
let mqttUrl = '';
let pgUrl = '';
let base = '';
let publisher: mqtt.MqttClient;
let published = 0;
const pages: WatchedPage[] = [];

before(async () => {
  // The page as the source is now (npm run build does the same; about a second).
  await buildConsole();
  mqttUrl = (await sharedMosquitto()).url;
  pgUrl = await freshDatabase((await sharedPostgres()).url);
  await query(pgUrl, READINGS_DDL);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: CLIENT });
  weir = await startWeir({ ...files, rules: { ...files.rules, 'readings.yaml': READINGS_RULE } });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  base = `http://127.0.0.1:${weir.httpPort}`;
  publisher = await mqtt.connectAsync(mqttUrl, { clientId: `${CLIENT}-pub-${process.pid}`, protocolVersion: 5, reconnectPeriod: 0 });
  browser = await TestBrowser.launch();
});

after(async () => {
  await browser?.close();
  await publisher?.endAsync();
  await weir?.kill();
  if (mqttUrl) await endSessions(mqttUrl, CLIENT);
});

async function publish(topic: string, payload: string | Buffer): Promise<void> {
  await publisher.publishAsync(topic, payload, { qos: 1 });
  published++;
}

let seq = 0;
/** One telemetry sample, one plausible reading, and every fifth round a hot reading, a reading without temp and a payload that is not JSON. */
async function round(): Promise<void> {
  const i = seq++;
  const device = `d${i % 5}`;
  await publish(
    `device/${device}/telemetry`,
    JSON.stringify({ device, seq: i, ts: 1_733_140_000_000 + i, temp: 20 + (i % 10) / 4, hum: 40.5, location: 'hall-3' }),
  );
  await publish(`lab/${device}/reading`, JSON.stringify({ seq: i, temp: 21.25 }));
  if (i % 5 === 0) {
    await publish(`lab/hot/reading`, JSON.stringify({ seq: i, temp: 75.5 }));
    await publish(`lab/${device}/reading`, JSON.stringify({ seq: 100_000 + i }));
    await publish(`lab/${device}/reading`, `not json ${i}`);
  }
}

/** Every message published is acked and no sink holds anything: the counters stand still. */
async function quiesce(): Promise<void> {
  await waitFor(
    async () => {
      const m = await weir.metrics();
      return (
        sumMetric(m, 'weir_ingest_acked_total') === published &&
        sumMetric(m, 'weir_ingest_unacked') === 0 &&
        sumMetric(m, 'weir_sink_inflight') === 0 &&
        sumMetric(m, 'weir_sink_queuing') === 0
      );
    },
    30_000,
    `weir to ack all ${published} messages`,
  );
}

async function open(view: string, width = 1280, height = 900): Promise<WatchedPage> {
  const w = await browser.page(width, height);
  pages.push(w);
  await w.page.goto(`${base}/#/${view}`);
  await w.page.waitForSelector(`[data-view="${view}"], .note[data-access]`);
  return w;
}

/** A number as the page shows it (12,345). */
async function shown(page: Page, selector: string): Promise<number> {
  const text = (await page.locator(selector).first().textContent()) ?? '';
  const n = Number(text.replace(/[,\s+]/g, ''));
  assert.ok(Number.isFinite(n), `${selector}: ${JSON.stringify(text)} is a number`);
  return n;
}

function assertClean(w: WatchedPage, what: string): void {
  assert.deepEqual(w.errors, [], `${what}: no console error`);
  assert.deepEqual(w.failures, [], `${what}: no failed request`);
  const foreign = w.requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `${what}: every request goes to weir (${base})`);
  assert.ok(w.requests.length >= 3, `${what}: the page, its script and its style sheet were requested`);
}

test('every page loads with no console error, asks only weir, and is photographed', { timeout: 180_000 }, async () => {
  // Traffic for a while, so the chart and the sparklines have a history (one point per 5 s).
  const until = Date.now() + 22_000;
  while (Date.now() < until) {
    await round();
    await new Promise((r) => setTimeout(r, 100));
  }
  mkdirSync(SHOTS, { recursive: true });
  for (const view of VIEWS) {
    const w = await open(view);
    if (view === 'overview') {
      await w.page.waitForSelector('.chart canvas');
      // What a first load costs (measured, printed; the budget is asserted at the build).
      const load = await w.page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        const res = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
        const painted = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN;
        return { bytes: nav.transferSize + res.reduce((s, r) => s + r.transferSize, 0), requests: 1 + res.length, painted, loaded: nav.loadEventEnd };
      });
      process.stdout.write(
        `# first load of the overview: ${load.requests} requests, ${(load.bytes / 1024).toFixed(1)} KB transferred, first paint at ${load.painted.toFixed(0)} ms, load event at ${load.loaded.toFixed(0)} ms\n`,
      );
    }
    if (view === 'dead-letters') await w.page.waitForSelector('[data-letter]');
    // Try it, Trace and Dead letters are photographed in their own tests, at work.
    if (['overview', 'rules', 'sinks', 'reconcile'].includes(view)) await w.page.screenshot({ path: join(SHOTS, `${view}.png`), fullPage: true });
    assertClean(w, view);
    await w.page.close();
  }
});

test('each counter on Overview and Rules equals /metrics once the traffic has stopped', { timeout: 60_000 }, async () => {
  await quiesce();
  const metrics = await weir.metrics();

  const overview = await open('overview');
  await overview.page.waitForSelector('[data-connection]');
  assert.equal(await shown(overview.page, '[data-stat="dead_letters_total"] .stat-value'), sumMetric(metrics, 'weir_dead_letter_total'), 'dead letters');
  assert.ok(sumMetric(metrics, 'weir_dead_letter_total') > 0, 'some letters to count');
  const connections = await overview.page.locator('[data-connection]').count();
  assert.equal(connections, 2, 'both connections');
  for (let i = 0; i < connections; i++) {
    const row = overview.page.locator('[data-connection]').nth(i);
    assert.equal(Number((await row.locator('[data-counter="unacked"]').textContent())?.replace(/,/g, '')), 0, 'nothing unacked');
  }
  assertClean(overview, 'overview');

  const rules = await open('rules');
  await rules.page.waitForSelector('[data-rule="readings"] [data-counter="matched"]');
  for (const rule of ['telemetry_to_tsdb', 'readings']) {
    for (const name of RULE_COUNTERS) {
      const metric = ruleMetric(name);
      assert.ok(metrics.has(`${metric}{rule="${rule}"}`), `${metric}{rule="${rule}"} on /metrics`);
      const onPage = await shown(rules.page, `[data-rule="${rule}"] [data-counter="${name}"]`);
      assert.equal(onPage, sumMetric(metrics, metric, `rule="${rule}"`), `${rule} ${name} = ${metric}`);
    }
  }
  assert.ok(sumMetric(metrics, 'weir_rule_failed_no_result_total', 'rule="readings"') > 0, 'a no_result counted');
  assert.ok(sumMetric(metrics, 'weir_rule_failed_exception_total', 'rule="readings"') > 0, 'an exception counted');
  assert.ok(sumMetric(metrics, 'weir_rule_actions_failed_total', 'rule="readings"') > 0, 'a refused row counted');
  assertClean(rules, 'rules');

  const reconcile = await open('reconcile');
  await reconcile.page.waitForSelector('[data-verdict]');
  assert.equal(await reconcile.page.getAttribute('[data-verdict]', 'data-verdict'), 'ok', 'every difference 0 once quiet');
  assertClean(reconcile, 'reconcile');
});

/** `weir eval` on one line: its parsed output line. */
function weirEval(line: object): Promise<{ ok: boolean; matched?: boolean; outputs?: unknown[]; error?: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/harness/weir-entry.ts'), 'eval'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.once('error', reject);
    p.once('exit', () => resolve(JSON.parse(out.trim())));
    p.stdin.end(`${JSON.stringify(line)}\n`);
  });
}

test('Try it shows what weir eval prints for the same input, and an SQL error at its line and column', { timeout: 60_000 }, async () => {
  const sql =
    'SELECT payload.temp * 2 AS double_temp, clientid AS device,\n  upper(payload.location) AS place\nFROM "device/+/telemetry"\nWHERE payload.temp > 20';
  const event = { topic: 'device/d7/telemetry', payload: '{"temp": 21.75, "location": "hall-3"}', clientid: 'd7' };
  const w = await open('try');
  await w.page.fill('textarea[name="sql"]', sql);
  await w.page.fill('input[name="topic"]', event.topic);
  await w.page.fill('textarea[name="payload"]', event.payload);
  await w.page.fill('input[name="clientid"]', event.clientid);
  await w.page.click('button[type="submit"]');
  await w.page.waitForSelector('[data-try="outputs"]');
  const fromPage = JSON.parse((await w.page.textContent('[data-try="outputs"]')) ?? '');
  const evaluated = await weirEval({ sql, event });
  assert.equal(evaluated.ok, true);
  assert.deepEqual(fromPage, evaluated.outputs);
  assert.deepEqual(fromPage, [{ double_temp: 43.5, device: 'd7', place: 'HALL-3' }]);
  assert.match((await w.page.textContent('[data-try="matched"]')) ?? '', /^matched: 1 output$/);
  await w.page.screenshot({ path: join(SHOTS, 'try.png'), fullPage: true });

  const bad = 'SELECT payload.temp AS t,\n  clientid AS\nFROM "device/+/telemetry"';
  await w.page.fill('textarea[name="sql"]', bad);
  await w.page.click('button[type="submit"]');
  await w.page.waitForSelector('[data-try="error"]');
  const position = (await w.page.textContent('[data-try="position"]')) ?? '';
  const [, line, column] = /line (\d+), column (\d+)/.exec(position) ?? [];
  const failed = await weirEval({ sql: bad, event });
  assert.equal(failed.ok, false);
  assert.ok(line && column, `a line and column: ${position}`);
  assert.match(failed.error ?? '', new RegExp(`\\b${line}:${column}\\b|line ${line}`), `weir eval names the same place: ${failed.error}`);
  // A running rule: the row its action would write, and nothing written.
  await w.page.check('input[name="mode"] >> nth=1');
  await w.page.selectOption('select[name="rule"]', 'readings');
  await w.page.fill('input[name="topic"]', 'lab/d7/reading');
  await w.page.fill('textarea[name="payload"]', '{"seq": 424242, "temp": 21.5}');
  await w.page.click('button[type="submit"]');
  await w.page.waitForSelector('[data-action="tsdb"] [data-try="writes"]');
  assert.deepEqual(JSON.parse((await w.page.textContent('[data-action="tsdb"] [data-try="writes"]')) ?? ''), [{ device_id: 'd7', seq: 424242, temp: 21.5 }]);
  assert.deepEqual(await query(pgUrl, 'SELECT * FROM readings WHERE seq = 424242'), [], 'Try it writes nothing');
  assertClean(w, 'try');
});

test('a trace shows a message published after it started, step by step', { timeout: 60_000 }, async () => {
  const w = await open('trace');
  await w.page.selectOption('select[name="rule"]', 'readings');
  await w.page.fill('input[name="count"]', '1');
  await w.page.click('button[type="submit"]');
  await w.page.waitForSelector('text=Waiting for the next message of readings');
  const started = Date.now();
  await publish('lab/tr1/reading', JSON.stringify({ seq: 900_001, temp: 22.5 }));
  await w.page.waitForSelector('[data-topic="lab/tr1/reading"] [data-step="stored"]', { timeout: 10_000 });
  const shownAfterMs = Date.now() - started;
  process.stdout.write(`# trace: the message shown ${shownAfterMs} ms after it was published\n`);
  const steps = await w.page.locator('[data-topic="lab/tr1/reading"] [data-step]').evaluateAll((els) => els.map((e) => e.getAttribute('data-step')));
  assert.deepEqual(steps.slice(0, 1), ['received']);
  assert.ok(steps.includes('output') && steps.at(-1) === 'stored', `received → output → … → stored: ${steps.join(', ')}`);
  assert.match((await w.page.textContent('[data-topic="lab/tr1/reading"] pre')) ?? '', /"seq":900001/);
  assertClean(w, 'trace');
  await w.page.screenshot({ path: join(SHOTS, 'trace.png'), fullPage: true });
});

test('a letter replayed from the page is stored; a purge asks first and removes the letter', { timeout: 90_000 }, async () => {
  await quiesce();
  const w = await open('dead-letters');
  await w.page.fill('input[name="reason"]', 'rejected');
  await w.page.click('form button[type="submit"]');
  await w.page.waitForSelector('[data-letter]');
  const ids = await w.page.locator('[data-letter]').evaluateAll((els) => els.map((e) => e.getAttribute('data-letter')!));
  assert.ok(ids.length >= 2, `refused rows are letters: ${ids.length}`);

  // One shown as text and as hex.
  const first = w.page.locator(`[data-letter="${ids[0]}"]`);
  await first.locator('button.link').click();
  await w.page.waitForSelector('[data-payload="text"]');
  const text = (await w.page.textContent('[data-payload="text"]')) ?? '';
  const hot = JSON.parse(text) as { seq: number; temp: number };
  assert.equal(hot.temp, 75.5);
  await first.locator('input[type="radio"]').nth(1).check();
  const hex = (await w.page.textContent('[data-payload="hex"]')) ?? '';
  assert.equal(Buffer.from(hex.replace(/^[0-9a-f]{4} {2}/gm, '').replace(/\s+/g, ''), 'hex').toString(), text, 'the hex is the same bytes');
  await first.locator('input[type="radio"]').nth(0).check();
  await w.page.screenshot({ path: join(SHOTS, 'dead-letters.png') });

  // The table is fixed; the letter replayed from the page is stored.
  await query(pgUrl, 'ALTER TABLE readings DROP CONSTRAINT plausible');
  await first.locator('input[type="checkbox"]').check();
  await w.page.click('button:text("Replay selected")');
  await w.page.waitForSelector('[data-confirm="replay"]');
  await w.page.click('[data-confirm="replay"] button:text("Yes, replay")');
  await w.page.waitForSelector('[data-outcome]');
  assert.match((await w.page.textContent('[data-outcome]')) ?? '', /^replay: 1 done, 0 failed/);
  const rows = await query<{ temp: number }>(pgUrl, "SELECT temp FROM readings WHERE device_id = 'hot' AND seq = $1", [hot.seq]);
  assert.deepEqual(rows, [{ temp: 75.5 }], 'the replayed letter is a row');

  // Purge: asked first; cancel keeps it, yes removes it.
  const victim = ids[1]!;
  await w.page.locator(`[data-letter="${victim}"] input[type="checkbox"]`).check();
  await w.page.click('button:text("Purge selected")');
  await w.page.click('[data-confirm="purge"] button:text("Cancel")');
  assert.equal(await w.page.locator(`[data-letter="${victim}"]`).count(), 1, 'cancel keeps it');
  await w.page.click('button:text("Purge selected")');
  await w.page.click('[data-confirm="purge"] button:text("Yes, purge")');
  await w.page.waitForSelector('[data-outcome]');
  assert.match((await w.page.textContent('[data-outcome]')) ?? '', /^purge: 1 done, 0 failed/);
  await waitFor(async () => (await w.page.locator(`[data-letter="${victim}"]`).count()) === 0, 10_000, 'the purged letter to leave the list');
  const detail = await fetch(`${base}/api/dead-letters/${encodeURIComponent(victim)}`);
  assert.equal(detail.status, 404, 'and the store');
  assertClean(w, 'dead letters');
});

test('at 380 px wide no page scrolls sideways', { timeout: 60_000 }, async () => {
  for (const view of VIEWS) {
    const w = await open(view, 380, 800);
    await w.page.waitForTimeout(300);
    const { scroll, client } = await w.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    assert.ok(scroll <= client, `${view}: ${scroll} px of content in ${client} px`);
    if (view === 'overview') await w.page.screenshot({ path: join(SHOTS, 'overview-narrow.png'), fullPage: true });
    assertClean(w, `${view} at 380 px`);
    await w.page.close();
  }
});

test('a hidden tab asks weir nothing; shown again, it asks at once', { timeout: 60_000 }, async () => {
  const w = await open('overview');
  await w.page.waitForSelector('[data-stat="dead_letters_total"]');
  const apiCalls = () => w.requests.filter((u) => u.includes('/api/')).length;
  // Headless Chromium's tabs are always visible: the page is told what a browser tells a tab put
  // in the background (visibilityState and its event), and its requests are counted.
  const setVisibility = (state: 'hidden' | 'visible') =>
    w.page.evaluate((s) => {
      Object.defineProperty(document, 'visibilityState', { value: s, configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    }, state);
  await setVisibility('hidden');
  const before = apiCalls();
  await w.page.waitForTimeout(8000);
  assert.equal(apiCalls(), before, 'no request in 8 s hidden (the overview polls every 3 s)');
  await setVisibility('visible');
  await waitFor(() => apiCalls() > before, 2000, 'a request once visible');
  assertClean(w, 'overview, hidden and shown');
});

test('without credentials on a public port: no payloads, Try it, traces, replay or purge, and the page says why', { timeout: 60_000 }, async () => {
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: `${CLIENT}-open` });
  const open0 = await startWeir({ config: files.config.replace('http: { host: 127.0.0.1,', 'http: { host: 0.0.0.0,'), rules: files.rules });
  try {
    await waitFor(() => open0.ready(), 30_000, 'weir ready');
    const at = `http://127.0.0.1:${open0.httpPort}`;
    for (const view of ['try', 'trace', 'dead-letters']) {
      const w = await browser.page();
      await w.page.goto(`${at}/#/${view}`);
      await w.page.waitForSelector('.note[data-access="payloads"]');
      assert.match((await w.page.textContent('.note[data-access="payloads"]')) ?? '', /not offered to this client: .*http\.basic_auth/);
      assert.equal(await w.page.locator('form').count(), 0, `${view}: no form`);
      assert.deepEqual(w.errors, [], `${view}: no console error`);
      await w.page.close();
    }
  } finally {
    await open0.kill();
    await endSessions(mqttUrl, `${CLIENT}-open`);
  }
});

test("console.sequence on the Reconcile page: the check's gap and stale keys in red, as the API gives them", { timeout: 150_000 }, async () => {
  // A table of its own with a time per row; device sq1 loses seq 2, sq2 none; both then fall silent.
  const seqDb = await freshDatabase((await sharedPostgres()).url);
  await query(seqDb, READINGS_DDL.replace(', PRIMARY KEY', ', ts timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY'));
  const clientId = `${CLIENT}-seq`;
  const files = telemetryFiles({ mqttUrl, pgUrl: seqDb, clientId });
  const config = `${files.config}console: { sequence: ["readings:device_id:seq:ts"], stale_after: 2, sequence_every_s: 10 }\n`;
  const seqWeir = await startWeir({ config, rules: { 'readings.yaml': READINGS_RULE } });
  try {
    await waitFor(() => seqWeir.ready(), 30_000, 'weir ready');
    for (const [device, s] of [
      ['sq1', 1],
      ['sq2', 1],
      ['sq1', 3],
      ['sq2', 2],
      ['sq1', 4],
      ['sq2', 3],
    ] as const) {
      await publisher.publishAsync(`lab/${device}/reading`, JSON.stringify({ seq: s, temp: 21 }), { qos: 1 });
      await new Promise((r) => setTimeout(r, 300));
    }
    await waitFor(async () => (await seqWeir.metric('weir_sink_success_total', 'rule="readings"')) >= 6, 30_000, 'the six readings stored');
    await new Promise((r) => setTimeout(r, 2_000));
    const at = `http://127.0.0.1:${seqWeir.httpPort}`;
    const w = await browser.page();
    await w.page.goto(`${at}/#/reconcile`);
    await w.page.waitForSelector('[data-table="sequence"]', { timeout: 30_000 });
    const row = '[data-table="sequence"] [data-row="readings:device_id:seq:ts"]';
    // A busy machine can stretch a key's interval (its last row stored late): the page polls, and
    // the check runs again every 10 s, until the silence has grown past both keys' intervals.
    await waitFor(async () => (await w.page.textContent(`${row} [data-counter="stale_keys"]`)) === '+2', 60_000, 'both keys stale on the page');
    assert.equal(await w.page.textContent(`${row} [data-counter="sequence_missing"]`), '+1');
    assert.match((await w.page.getAttribute(`${row} [data-counter="sequence_missing"]`, 'class')) ?? '', /\bbad\b/);
    assert.equal(await w.page.getAttribute('[data-verdict]', 'data-verdict'), 'difference');
    assert.match((await w.page.textContent('[data-view="reconcile"]')) ?? '', /sq1: 1 missing, first 2/);
    assert.deepEqual(w.errors, [], 'no console error');
    await w.page.close();
  } finally {
    await seqWeir.kill();
    await endSessions(mqttUrl, clientId);
  }
});
