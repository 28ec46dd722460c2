// Unit tests of the mqtt (republish) sink's pure parts: its schemas and lint, the encoding of an
// output into a PUBLISH (templates, QoS, properties, what is refused per message), the error
// classes, and the republish-loop check, through `weir check`. What the brokers do is in
// mqtt-e2e.int.test.ts and the conformance suite, against real Mosquitto and HiveMQ.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { bindMqttAction, EncodeError } from '../../src/sinks/mqtt/action.js';
import { classifyMqttError } from '../../src/sinks/mqtt/classify.js';
import { MqttError } from '../../src/sinks/mqtt/errors.js';
import { couldMatch, lintMqttAction } from '../../src/sinks/mqtt/loop.js';
import { targetOf } from '../../src/sinks/mqtt/target.js';
import { lintMqttConfig, MqttActionSpec, MqttConfigSpec, type MqttAction, type MqttConfig } from '../../src/sinks/mqtt/spec.js';
import type { SinkInput } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

function config(input: Record<string, unknown>): MqttConfig {
  const v = Value.Default(MqttConfigSpec, structuredClone(input));
  assert.ok(Value.Check(MqttConfigSpec, v), [...Value.Errors(MqttConfigSpec, v)].map((e) => `${e.path}: ${e.message}`).join('\n'));
  return v as MqttConfig;
}

function action(input: Record<string, unknown>): MqttAction {
  const v = Value.Default(MqttActionSpec, structuredClone(input));
  assert.ok(Value.Check(MqttActionSpec, v), [...Value.Errors(MqttActionSpec, v)].map((e) => `${e.path}: ${e.message}`).join('\n'));
  return v as MqttAction;
}

const input = (record: Record<string, unknown>, clientid = 'dev-1'): SinkInput => ({
  record,
  event: { topic: `device/${clientid}/telemetry`, payload: Buffer.from('{}'), clientid } as never,
  ruleId: 'r',
});

describe('mqtt action encoding', () => {
  it('renders the topic, QoS, retain, payload (the record as JSON by default), properties and user properties', () => {
    const bound = bindMqttAction(
      action({
        topic: 'alerts/${clientid}',
        retain: true,
        properties: { content_type: 'application/json', message_expiry_interval: 60, response_topic: 'replies/${clientid}', correlation_data: '${id}' },
        user_properties: { device: '${clientid}', missing: '${nope}', rule: 'hot' },
      }),
      'r',
    );
    const item = bound.encode(input({ id: 7, temp: 81.5 }));
    assert.equal(item.topic, 'alerts/dev-1');
    assert.equal(item.qos, 1);
    assert.equal(item.retain, true);
    assert.equal(item.payload.toString(), '{"id":7,"temp":81.5}');
    assert.equal(item.properties?.contentType, 'application/json');
    assert.equal(item.properties?.messageExpiryInterval, 60);
    assert.equal(item.properties?.responseTopic, 'replies/dev-1');
    assert.equal(item.properties?.correlationData?.toString(), '7');
    assert.deepEqual(item.properties?.userProperties, { device: 'dev-1', rule: 'hot' }, 'a missing value leaves its user property out');
    assert.deepEqual(bound.describe?.(item), {
      topic: 'alerts/dev-1',
      qos: 1,
      retain: true,
      properties: {
        contentType: 'application/json',
        messageExpiryInterval: 60,
        responseTopic: 'replies/dev-1',
        correlationData: '7',
        userProperties: { device: 'dev-1', rule: 'hot' },
      },
      payload: '{"id":7,"temp":81.5}',
    });
  });

  it('a payload template: a lone ${path} gives the value as it is; text around it renders', () => {
    const raw = bindMqttAction(action({ topic: 't', payload: '${value}' }), 'r');
    assert.equal(raw.encode(input({ value: Buffer.from([0, 1, 2]) })).payload.toString('hex'), '000102');
    const text = bindMqttAction(action({ topic: 't', payload: 'temp=${temp}' }), 'r');
    assert.equal(text.encode(input({ temp: 81.5 })).payload.toString(), 'temp=81.5');
    assert.throws(() => raw.encode(input({})), EncodeError, 'a missing payload is refused');
  });

  it('a QoS template renders 0 or 1; anything else refuses that message', () => {
    const bound = bindMqttAction(action({ topic: 't', qos: '${q}' }), 'r');
    assert.equal(bound.encode(input({ q: 0 })).qos, 0);
    assert.equal(bound.encode(input({ q: '1' })).qos, 1);
    for (const q of [2, 'x', undefined])
      assert.throws(
        () => bound.encode(input({ q })),
        (e: unknown) => e instanceof EncodeError && /not 0 or 1/.test(e.message),
      );
  });

  it('a topic that renders empty or with a wildcard refuses that message alone (reject class); a fixed bad topic fails the action', () => {
    const bound = bindMqttAction(action({ topic: '${t}' }), 'r');
    assert.equal(bound.encode(input({ t: 'ok/1' })).topic, 'ok/1');
    for (const t of ['', undefined, 'a/+/b', 'a/#']) {
      assert.throws(
        () => bound.encode(input({ t })),
        (e: unknown) => e instanceof EncodeError && e.code === 'sink.mqtt.encode' && classifyMqttError(e) === 'reject',
      );
    }
    assert.throws(
      () => bindMqttAction(action({ topic: 'alerts/#' }), 'r'),
      (e: unknown) => e instanceof MqttError && e.code === 'sink.mqtt.bad_topic',
    );
  });
});

describe('mqtt sink settings', () => {
  it('without url: the broker weir reads from, its credentials, TLS and protocol version', () => {
    const broker = { url: 'mqtts://b:8883', protocol_version: 4, username: 'u', password: 'p', tls: { verify: false } } as never;
    assert.deepEqual(targetOf(config({}), broker), { url: 'mqtts://b:8883', protocolVersion: 4, username: 'u', password: 'p', tls: { verify: false } });
    assert.deepEqual(targetOf(config({ url: 'mqtt://other:1883' }), broker), {
      url: 'mqtt://other:1883',
      protocolVersion: 5,
      username: undefined,
      password: undefined,
      tls: undefined,
    });
  });

  it('lint: a url weir cannot use, cert without key, tls without url', () => {
    assert.deepEqual(lintMqttConfig(config({ url: 'mqtt://b:1883' })), []);
    assert.deepEqual(
      lintMqttConfig(config({ url: 'http://b' })).map((p) => p.path.join('.')),
      ['url'],
    );
    assert.deepEqual(
      lintMqttConfig(config({ url: 'mqtts://b', tls: { cert: '/c.pem' } })).map((p) => p.path.join('.')),
      ['tls'],
    );
    assert.deepEqual(
      lintMqttConfig(config({ tls: { verify: false } })).map((p) => p.code),
      ['config.sink.mqtt'],
    );
  });

  it('error classes: a PUBACK refusal rejects the message, busy and connection loss retry, a CONNACK refusal is fatal', () => {
    assert.equal(classifyMqttError(new MqttError('sink.mqtt.refused', 'x')), 'reject');
    assert.equal(classifyMqttError(new MqttError('sink.mqtt.busy', 'x')), 'retry');
    assert.equal(classifyMqttError(new MqttError('sink.mqtt.connection_lost', 'x')), 'retry');
    assert.equal(classifyMqttError(new MqttError('sink.mqtt.connect_refused', 'x')), 'fatal');
    assert.equal(classifyMqttError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })), 'retry');
    assert.equal(classifyMqttError(Object.assign(new Error('cert'), { code: 'CERT_HAS_EXPIRED' })), 'fatal');
  });
});

describe('republish loop', () => {
  it('a template could render a topic the filter matches', () => {
    const cases: Array<[string, string, boolean]> = [
      ['device/+/telemetry', 'alerts/${clientid}', false],
      ['device/+/telemetry', 'device/${clientid}/telemetry', true],
      ['device/+/telemetry', 'device/${clientid}/alerts', false],
      ['device/#', 'device/${clientid}/alerts', true],
      ['device/#', 'device', true],
      ['$share/g/device/+/telemetry', 'device/x/telemetry', true],
      ['device/+/telemetry', 'dev-${id}/x/telemetry', false],
      ['device/+/telemetry', 'dev${id}/x/telemetry', true],
      ['device/+/telemetry', '${topic}', true],
      ['device/+/telemetry', '${topic}/alert', false],
      ['device/+/telemetry', 'alerts/${topic}', false],
      ['#', '$SYS/x', false],
      ['#', 'anything/${x}', true],
    ];
    for (const [filter, template, want] of cases) assert.equal(couldMatch(filter, template), want, `${filter} vs ${template}`);
  });

  it('only on the broker weir reads from, and not with allow_loop', () => {
    const broker = { url: 'mqtt://b:1883' } as never;
    const a = action({ topic: 'device/${clientid}/telemetry' });
    const filters = ['device/+/telemetry'];
    assert.deepEqual(
      lintMqttAction(a, { filters, sink: config({}), broker }).map((p) => [p.path.join('.'), p.code]),
      [['topic', 'config.republish_loop']],
    );
    assert.equal(lintMqttAction(a, { filters, sink: config({ url: 'mqtt://b' }), broker }).length, 1, 'the same broker, written out');
    assert.deepEqual(lintMqttAction(a, { filters, sink: config({ url: 'mqtt://other:1883' }), broker }), []);
    assert.deepEqual(lintMqttAction({ ...a, allow_loop: true }, { filters, sink: config({}), broker }), []);
  });

  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const files = (extra: string) => {
    const dir = tempDir('mqtt-loop');
    dirs.push(dir);
    writeWeirFiles(
      {
        config: 'broker:\n  url: mqtt://127.0.0.1:1\nsinks:\n  republish:\n    type: mqtt\ndead_letter: { file: dl.jsonl }\nhttp: { port: {{HTTP_PORT}} }\n',
        rules: {
          'echo.yaml': `id: echo\nsql: SELECT clientid AS id FROM "device/+/telemetry"\nactions:\n  - sink: republish\n    topic: device/\${id}/telemetry\n${extra}`,
        },
      },
      0,
      dir,
    );
    return join(dir, 'weir.yaml');
  };

  it('weir check refuses a rule that republishes into its own FROM, at the topic line, and accepts it with allow_loop: true', async () => {
    const cfg = files('');
    const r = await runCli(['check', '-c', cfg]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /rules\/echo\.yaml:5:\d+: .*FROM "device\/\+\/telemetry".*allow_loop: true/);
    const ok = await runCli(['check', '-c', files('    allow_loop: true\n')]);
    assert.equal(ok.code, 0, ok.stderr);
  });
});
