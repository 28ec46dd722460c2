// Sessions that do not surprise (operators' issue, item 2), against a real Mosquitto: weir warns
// when weir.yaml leaves broker.client_id to its default (read from the YAML: the same id written
// out is no warning), and `weir run --transient` leaves no session at the broker, where a default
// run leaves one that keeps taking a share of the group's messages.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freePort, waitFor } from '../harness/process.js';
import { startWeir, type WeirFiles, type WeirProcess } from '../harness/weir.js';
import { endSessions, sessionPresent, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id);
});

/** weir with only the broker: its sink points at a closed port, since no message is sent. */
async function brokerOnly(mqttUrl: string, clientId: string, shareGroup: string): Promise<WeirFiles> {
  const files = telemetryFiles({ mqttUrl, pgUrl: `postgres://weir@127.0.0.1:${await freePort()}/weir`, clientId, shareGroup });
  return { ...files, config: files.config.replace('migrate_on_start: true', '') };
}

async function runAndStop(files: WeirFiles, args: string[] = []): Promise<string> {
  const weir = await startWeir(files, { args });
  running.push(weir);
  await waitFor(async () => weir.log().includes('"subscribed"'), 20_000, 'weir subscribed');
  assert.equal(await weir.stop(), 0);
  running.splice(running.indexOf(weir), 1);
  return weir.log();
}

test('broker.client_id left out of weir.yaml: a warning names the share group, the session and the client ids; written out, none', {
  timeout: 60_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  sessions.push([mqttUrl, 'weir']);
  const explicit = await brokerOnly(mqttUrl, 'weir', 'weir-sessions-default');
  const defaulted = { ...explicit, config: explicit.config.replace(/^ {2}client_id: weir\n/m, '') };
  assert.notEqual(defaulted.config, explicit.config);

  const log = await runAndStop(defaulted);
  const warn = log.split('\n').find((l) => l.includes('broker.client_id is not set'));
  assert.ok(warn, log);
  const line = JSON.parse(warn) as { level: number; msg: string; client_ids: string[]; session_expiry_s: number };
  assert.equal(line.level, 40);
  assert.match(line.msg, /share group 'weir-sessions-default' with a persistent session \(session expiry 604800 s\)/);
  assert.match(line.msg, /--transient/);
  assert.deepEqual(line.client_ids, ['weir-0', 'weir-1']);

  const quiet = await runAndStop(explicit);
  assert.doesNotMatch(quiet, /client_id is not set/, "the same id written in weir.yaml is the operator's choice");
});

test('weir run --transient leaves no session at the broker; a default run leaves one', { timeout: 60_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  sessions.push([mqttUrl, 'weir-transient'], [mqttUrl, 'weir-persistent']);

  const transient = await runAndStop(await brokerOnly(mqttUrl, 'weir-transient', 'weir-sessions'), ['--transient']);
  assert.match(transient, /transient sessions \(--transient\)/, 'logged at start');
  assert.match(transient, /"client_id":"weir-transient-0","session_present":false/);
  assert.equal(await sessionPresent(mqttUrl, 'weir-transient-0'), false, 'the broker dropped the session at disconnect');
  assert.equal(await sessionPresent(mqttUrl, 'weir-transient-1'), false);

  // The control: without the flag the broker keeps the session for the next start.
  await runAndStop(await brokerOnly(mqttUrl, 'weir-persistent', 'weir-sessions'));
  assert.equal(await sessionPresent(mqttUrl, 'weir-persistent-0'), true);
});
