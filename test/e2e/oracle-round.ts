// One round of the content oracle (oracle.test.ts): N generated rules, each with its own topic
// filter and table, run by weir as its own process against the run's Mosquitto and PostgreSQL;
// every message of every rule published once (QoS 1); then the stored rows, the dead letters,
// and what `weir eval` says each rule outputs for each message (the rule engine alone) are
// collected for the comparison (oracle-compare.ts).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import mqtt from 'mqtt';
import pg from 'pg';
import { freshDatabase } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { ROOT, startWeir } from '../harness/weir.js';
import { endSessions } from './fixtures.js';
import type { GenPayload, GenRule } from './oracle-gen.js';
import { type ColType, templateText, type Template } from './oracle-values.js';

export interface PlannedRule {
  readonly id: string;
  readonly rule: GenRule;
  readonly payloads: readonly GenPayload[];
}

/** The key column: `${topic}` or `${clientid}` (one per message), whichever the rule does not write; none if it writes both. */
export function keyTemplate(rule: GenRule): Template | undefined {
  for (const root of ['topic', 'clientid']) if (!rule.written.includes(root)) return [{ root, steps: [] }];
  return undefined;
}

export const table = (id: string) => `oracle_${id}`;
export const topicOf = (tag: string, id: string, j: number) => `oracle/${tag}/${id}/m${j}`;
/** The rule's SQL: its generated head over its own topics. */
export const sqlOf = (tag: string, p: PlannedRule) => `${p.rule.head} FROM "oracle/${tag}/${p.id}/+"`;

/** Epoch milliseconds and the event id the eval lines carry where weir's own values are not known beforehand. */
export const SENTINEL_TS = 4_102_444_800_123;
export const SENTINEL_ID = 'oracle-sentinel-event-id';
export const NODE = 'oracle@test';

/** The event `weir eval` is given for message j of a rule: what weir's event holds, id and time as sentinels. */
export function evalEvent(tag: string, id: string, j: number, payload: string): Record<string, unknown> {
  return {
    id: SENTINEL_ID,
    clientid: `m${j}`,
    payload,
    topic: topicOf(tag, id, j),
    qos: 1,
    flags: { retain: false, dup: false },
    pub_props: {},
    timestamp: SENTINEL_TS,
    publish_received_at: SENTINEL_TS,
    node: NODE,
    event: 'message.publish',
  };
}

/** One output line of `weir eval` per input line, in order. */
export async function weirEval(lines: readonly string[]): Promise<string[]> {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/harness/weir-entry.ts', 'eval'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const out: string[] = [];
  const reading = (async () => {
    for await (const l of createInterface({ input: p.stdout! })) out.push(l);
  })();
  for (const l of lines) if (!p.stdin!.write(`${l}\n`)) await new Promise((r) => p.stdin!.once('drain', r));
  p.stdin!.end();
  await reading;
  await new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)));
  if (out.length !== lines.length) throw new Error(`weir eval answered ${out.length} lines for ${lines.length}`);
  return out;
}

/** How a column is read back, the same expression the cast oracle uses (timestamptz as epoch ms). */
export const readExpr = (col: string, t: ColType) => (t === 'timestamptz' ? `(extract(epoch from ${col}) * 1000)::text` : `${col}::text`);

export interface StoredRound {
  /** Rows by rule id: key column (or null) then c0…, each as text. */
  readonly rows: ReadonlyMap<string, Array<Array<string | null>>>;
  readonly letters: ReadonlyArray<{ rule_id: string; topic: string; reason: string; error: string }>;
  /** When the first message was published and when weir had acked the last (ms). */
  readonly window: readonly [number, number];
  readonly pgUrl: string;
  /** Seconds: weir's start, publishing until weir acked the last message, reading back and stopping. */
  readonly timings: { start: number; publish: number; read: number };
}

function ruleFile(tag: string, p: PlannedRule): string {
  const key = keyTemplate(p.rule);
  const columns: Record<string, string> = {};
  if (key) columns.k = templateText(key);
  for (const [i, c] of p.rule.columns.entries()) columns[`c${i}`] = templateText(c.template);
  // JSON is YAML: every text (SQL, templates with any character) as one quoted scalar.
  return JSON.stringify({
    id: p.id,
    sql: sqlOf(tag, p),
    payload_format: p.rule.payloadFormat,
    actions: [{ sink: p.rule.insertMode === 'values' ? 'pgv' : 'pg', table: table(p.id), columns }],
  });
}

/** Creates the tables and runs weir over every message of every planned rule. */
export async function runRound(o: { tag: string; plan: readonly PlannedRule[]; mqttUrl: string; adminPgUrl: string }): Promise<StoredRound> {
  const pgUrl = await freshDatabase(o.adminPgUrl, 'weir_oracle');
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    for (const p of o.plan) {
      const cols = p.rule.columns.map((col, i) => `c${i} ${col.type}${col.notNull ? ' NOT NULL' : ''}`);
      await c.query(`CREATE TABLE ${table(p.id)} (${keyTemplate(p.rule) ? 'k text, ' : ''}${cols.join(', ')})`);
    }
  } finally {
    await c.end();
  }
  const clientId = `weir-oracle-${o.tag}`;
  const rules: Record<string, string> = {};
  for (const p of o.plan) rules[`${p.id}.yaml`] = ruleFile(o.tag, p);
  const began = Date.now();
  const weir = await startWeir({
    config: `
node: ${NODE}
broker:
  url: ${o.mqttUrl}
  client_id: ${clientId}
  connections: 2
  share_group: ${clientId}
  max_unacked: 5000
  reconnect: { min_ms: 100, max_ms: 1000 }
  publisher_clientid: { topic_level: 4 }
sinks:
  pg:
    type: postgres
    url: ${pgUrl}
    batch: { max_items: 64, max_delay_ms: 20 }
    retry: { initial_ms: 100, max_ms: 1000 }
  pgv:
    type: postgres
    url: ${pgUrl}
    insert_mode: values
    batch: { max_items: 64, max_delay_ms: 20 }
    retry: { initial_ms: 100, max_ms: 1000 }
dead_letter: { sink: pg }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
migrate_on_start: true
`,
    rules,
  });
  try {
    await waitFor(() => weir.ready(), 30_000, 'weir ready');
    const messages = o.plan.flatMap((p) => p.payloads.map((m, j) => ({ topic: topicOf(o.tag, p.id, j), payload: Buffer.from(m.text, 'utf8') })));
    const t0 = Date.now();
    await publishAll(o.mqttUrl, `${clientId}-pub`, messages);
    await waitFor(
      async () => (await weir.metric('weir_ingest_acked_total')) >= messages.length,
      60_000 + messages.length * 50,
      `weir to ack ${messages.length} messages`,
      50,
    );
    const t1 = Date.now();
    const rows = new Map<string, Array<Array<string | null>>>();
    const r = new pg.Client({ connectionString: pgUrl });
    await r.connect();
    try {
      for (const p of o.plan) {
        const exprs = [...(keyTemplate(p.rule) ? ['k'] : []), ...p.rule.columns.map((col, i) => readExpr(`c${i}`, col.type))];
        const res = await r.query({ text: `SELECT ${exprs.join(', ')} FROM ${table(p.id)}`, rowMode: 'array' });
        rows.set(p.id, res.rows as Array<Array<string | null>>);
      }
      const letters = (await r.query<StoredRound['letters'][number]>('SELECT rule_id, topic, reason, error FROM weir_dead_letter')).rows;
      const code = await weir.stop();
      if (code !== 0) throw new Error(`weir exited with ${code}:\n${weir.log()}`);
      const s = (a: number, b: number) => Math.round((b - a) / 100) / 10;
      return { rows, letters, window: [t0, t1], pgUrl, timings: { start: s(began, t0), publish: s(t0, t1), read: s(t1, Date.now()) } };
    } finally {
      await r.end();
    }
  } catch (err) {
    await weir.kill();
    throw err;
  } finally {
    await endSessions(o.mqttUrl, clientId);
  }
}

/** Publishes every message once, QoS 1, 100 in flight. */
async function publishAll(url: string, clientId: string, messages: ReadonlyArray<{ topic: string; payload: Buffer }>): Promise<void> {
  const client = await mqtt.connectAsync(url, { clientId, protocolVersion: 5, clean: true, reconnectPeriod: 1000 });
  try {
    let next = 0;
    const worker = async () => {
      while (next < messages.length) {
        const m = messages[next++]!;
        await client.publishAsync(m.topic, m.payload, { qos: 1 });
      }
    };
    await Promise.all(Array.from({ length: 100 }, worker));
  } finally {
    await client.endAsync();
  }
}
