// A rule reload replaces what the pipeline routes by: after setRules, a topic reaches the rules
// of the new set whose FROM matches it, and none of the old set's. The rules here have no actions
// (what is routed is the point, not what is stored), so no sink runs; the broker settings are the
// shipped weir.yaml's.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import type { RuleConfig } from '../../src/config/types.js';
import { CallbackSettlement } from '../../src/core/ingest/ack-path.js';
import { DeadLetterQueue } from '../../src/core/path/dead-letter-queue.js';
import { fileDeadLetterWriter } from '../../src/dead-letters/letter.js';
import type { InboundMessage } from '../../src/core/ingest/message.js';
import { Pipeline } from '../../src/core/path/pipeline.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, type Metrics } from '../../src/metrics/names.js';
import { compileSql } from '../../src/rules/index.js';
import { tempDir } from '../harness/process.js';
import { parseMetrics, ROOT } from '../harness/weir.js';

function rule(id: string, from: string): RuleConfig {
  const sql = `SELECT clientid FROM "${from}"`;
  return {
    id,
    file: `${id}.yaml`,
    source: sql,
    sql,
    compiled: compileSql(sql),
    payloadFormat: 'json',
    enabled: true,
    actions: [],
    tests: undefined,
    warnings: [],
  };
}

function message(topic: string): InboundMessage {
  return { topic, payload: Buffer.from('{"temp":1}'), qos: 1, retain: false, dup: false, properties: undefined, receivedAt: Date.now() };
}

/** Each rule's weir_rule_matched_total, and weir_ingest_no_rule_total under '-'. */
async function matched(m: Metrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [k, v] of parseMetrics(await m.registry.metrics())) {
    if (k === 'weir_ingest_no_rule_total') out['-'] = v;
    const rule = /^weir_rule_matched_total\{rule="(.*)"\}$/.exec(k)?.[1];
    if (rule) out[rule] = v;
  }
  return out;
}

test('after a reload, topics are routed by the new rules only: a filter removed routes nothing, a filter added routes at once', async () => {
  const dir = tempDir('pipeline-reload');
  const stop = new AbortController();
  try {
    const cfg = loadConfig(join(ROOT, 'weir.yaml'), {});
    const metrics = createMetrics();
    const retry = { initial_ms: 10, max_ms: 10, multiplier: 2, max_attempts: 0 };
    const dlq = new DeadLetterQueue(fileDeadLetterWriter(join(dir, 'dead.jsonl')), retry, metrics, silentLogger, stop.signal, join(dir, 'fallback.jsonl'));
    const pipeline = new Pipeline(cfg.broker, cfg.node, new Map(), dlq, metrics, silentLogger);
    let settled = 0;
    const send = (topic: string) => pipeline.handle(message(topic), new CallbackSettlement(() => settled++));

    pipeline.setRules([rule('telemetry', 'device/+/telemetry'), rule('all', 'device/#')]);
    send('device/1/telemetry');
    send('device/1/status');
    assert.deepEqual(await matched(metrics), { '-': 0, telemetry: 1, all: 2 });

    // 'all' removed, 'status' added, 'telemetry' kept as it was.
    pipeline.setRules([rule('telemetry', 'device/+/telemetry'), rule('status', 'device/+/status')]);
    send('device/1/telemetry');
    send('device/1/status');
    send('device/1/other');
    assert.deepEqual(await matched(metrics), { '-': 1, telemetry: 2, all: 2, status: 1 });
    assert.equal(settled, 5, 'every message settled');
  } finally {
    stop.abort();
    rmSync(dir, { recursive: true, force: true });
  }
});
