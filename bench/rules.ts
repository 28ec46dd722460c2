// Rule engine benchmark (npm run bench -- rules): evaluations per second on one core for
// (a) SELECT *, (b) a 5-field projection with a numeric WHERE over a ~200 B JSON payload — with
// the payload already decoded and with the decode included — and (c) a FOREACH over a
// 10-element array with DO and INCASE; each beside JSONata evaluating the equivalent expression;
// and (d) the projection written with jq() beside the SQL one, with the time from compiling the
// jq rule to its first result (worker and WebAssembly start-up). Writes bench/results/rules.json.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import jsonata from 'jsonata';
import { compileSql, createMessageContext, type MessageContext, type RuleEvent } from '../src/rules/index.js';
import { jsonataInput } from '../src/rules/compile/jsonata.js';

const PAYLOAD_B = JSON.stringify({
  device: 'sensor-0042',
  ts: 1700000000123,
  temp: 23.5,
  hum: 41.2,
  pressure: 1013.25,
  battery: 87,
  status: 'ok',
  loc: { lat: 52.52, lon: 13.405 },
  fw: '1.4.2',
  seq: 918273,
  alarm: false,
  unit: 'C',
  rssi: -67,
});
const PAYLOAD_C = JSON.stringify({ readings: Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, v: i })) });

function event(payload: string): RuleEvent {
  return {
    id: '0005E27C1D24E44FF440000017520000',
    clientid: 'dev-0042',
    username: 'fleet',
    topic: 'sensors/0042/telemetry',
    qos: 1,
    flags: { retain: false, dup: false },
    payload,
    peerhost: '10.1.2.3',
    timestamp: 1700000000123,
    publish_received_at: 1700000000123,
    node: 'weir@bench',
    event: 'message.publish',
  };
}

/**
 * Runs `fn` in batches for three windows of `ms / 3` (after a warm-up) and answers the best
 * window's calls per wall-clock second and per second of this process's CPU time. The bench host
 * is shared: the best window is the least disturbed one, and the CPU-time rate is what one core
 * would do if it were ours alone.
 */
async function rate(fn: () => unknown | Promise<unknown>, ms: number, isAsync: boolean, batch = isAsync ? 200 : 5_000): Promise<{ wall: number; cpu: number }> {
  const warmEnd = performance.now() + Math.min(300, ms / 3);
  while (performance.now() < warmEnd) for (let i = 0; i < batch; i++) isAsync ? await fn() : fn();
  const best = { wall: 0, cpu: 0 };
  for (let w = 0; w < 3; w++) {
    let n = 0;
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    let now = start;
    while (now - start < ms / 3) {
      if (isAsync) for (let i = 0; i < batch; i++) await fn();
      else for (let i = 0; i < batch; i++) fn();
      n += batch;
      now = performance.now();
    }
    const cpu = process.cpuUsage(cpu0);
    best.wall = Math.max(best.wall, Math.round((n * 1000) / (now - start)));
    best.cpu = Math.max(best.cpu, Math.round((n * 1e6) / Math.max(1, cpu.user + cpu.system)));
  }
  return best;
}

interface CaseResult {
  sql: string;
  jsonata: string;
  sql_evals_per_s: number;
  sql_evals_per_cpu_s: number;
  jsonata_evals_per_s: number;
  jsonata_evals_per_cpu_s: number;
  outputs_per_eval: number;
}

async function runCase(sql: string, expr: string, payload: string, decoded: boolean, ms: number): Promise<CaseResult> {
  const rule = compileSql(sql);
  const jn = jsonata(expr);
  const ev = event(payload);
  const shared = createMessageContext(ev);
  shared.decodedPayload();
  const ctx = (): MessageContext => (decoded ? shared : createMessageContext(ev));
  const first = rule.evaluate(shared, 'bench');
  if (first instanceof Promise || !first.matched) throw new Error(`bench rule did not match synchronously: ${sql}`);
  const input = jsonataInput(shared, 'bench');
  const sqlRate = await rate(() => rule.evaluate(ctx(), 'bench'), ms, false);
  const jsonataRate = await rate(() => jn.evaluate(decoded ? input : jsonataInput(createMessageContext(ev), 'bench')), ms, true);
  return {
    sql,
    jsonata: expr,
    sql_evals_per_s: sqlRate.wall,
    sql_evals_per_cpu_s: sqlRate.cpu,
    jsonata_evals_per_s: jsonataRate.wall,
    jsonata_evals_per_cpu_s: jsonataRate.cpu,
    outputs_per_eval: first.outputs.length,
  };
}

interface JqCaseResult {
  sql: string;
  jq_sql: string;
  sql_evals_per_s: number;
  jq_evals_per_s: number;
  jq_evals_per_cpu_s: number;
  jq_first_eval_ms: number;
}

/** The same projection in SQL and through jq(), over the decoded payload. */
async function runJqCase(sql: string, jqSql: string, payload: string, ms: number): Promise<JqCaseResult> {
  const ctx = createMessageContext(event(payload));
  ctx.decodedPayload();
  const t0 = performance.now();
  const jqRule = compileSql(jqSql);
  const first = jqRule.evaluate(ctx, 'bench');
  const firstMs = performance.now() - t0;
  if (first instanceof Promise || !first.matched) throw new Error(`bench rule did not match synchronously: ${jqSql}`);
  const sqlRule = compileSql(sql);
  const sqlRate = await rate(() => sqlRule.evaluate(ctx, 'bench'), ms, false);
  // jq takes milliseconds a call: small batches, so a window ends near its time.
  const jqRate = await rate(() => jqRule.evaluate(ctx, 'bench'), ms, false, 20);
  return {
    sql,
    jq_sql: jqSql,
    sql_evals_per_s: sqlRate.wall,
    jq_evals_per_s: jqRate.wall,
    jq_evals_per_cpu_s: jqRate.cpu,
    jq_first_eval_ms: Math.round(firstMs),
  };
}

export async function benchRules(opts: { ms?: number; write?: boolean } = {}): Promise<object> {
  const ms = opts.ms ?? 2_000;
  const from = 'FROM "sensors/+/telemetry"';
  const projection = `SELECT payload.device AS device, payload.temp AS temp, payload.hum AS hum, payload.battery AS battery, clientid ${from} WHERE payload.temp > 20`;
  const projectionJ =
    'payload.temp > 20 ? {"device": payload.device, "temp": payload.temp, "hum": payload.hum, "battery": payload.battery, "clientid": clientid}';
  const cases = {
    a_select_star: await runCase(`SELECT * ${from}`, '$', PAYLOAD_B, true, ms),
    b_projection_where_decoded: await runCase(projection, projectionJ, PAYLOAD_B, true, ms),
    b_projection_where_with_decode: await runCase(projection, projectionJ, PAYLOAD_B, false, ms),
    c_foreach_do_incase: await runCase(
      `FOREACH payload.readings AS r DO r.id AS id, r.v * 2 AS v2, clientid INCASE r.v > 4 ${from}`,
      'payload.readings[v > 4].{"id": id, "v2": v * 2, "clientid": $$.clientid}',
      PAYLOAD_C,
      true,
      ms,
    ),
  };
  const jqCase = await runJqCase(
    `SELECT payload.device AS device, payload.temp AS temp, payload.hum AS hum, payload.battery AS battery ${from}`,
    `SELECT first(jq('{device, temp, hum, battery}', payload)) AS r ${from}`,
    PAYLOAD_B,
    ms,
  );
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const result = {
    benchmark: 'rules',
    version: pkg.version,
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    payload_bytes: { b: Buffer.byteLength(PAYLOAD_B), c: Buffer.byteLength(PAYLOAD_C) },
    measure_ms_per_case: ms,
    method:
      'best of three windows per case after a warm-up; one thread; *_per_s is wall clock, *_per_cpu_s per second of process CPU time (includes GC); tsx-compiled TypeScript',
    load_average_1m: Number(loadavg()[0]?.toFixed(2)),
    target_b_decoded_evals_per_s: 1_000_000,
    cases,
    d_jq_projection: jqCase,
  };
  if (opts.write !== false) {
    const dir = new URL('./results/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    writeFileSync(new URL('rules.json', dir), `${JSON.stringify(result, null, 2)}\n`);
  }
  for (const [name, c] of Object.entries(cases)) {
    console.log(
      `${name.padEnd(32)} sql ${String(c.sql_evals_per_s).padStart(9)}/s (${String(c.sql_evals_per_cpu_s).padStart(9)}/cpu-s)   jsonata ${String(c.jsonata_evals_per_s).padStart(7)}/s (${String(c.jsonata_evals_per_cpu_s).padStart(7)}/cpu-s)`,
    );
  }
  console.log(
    `${'d_jq_projection'.padEnd(32)} sql ${String(jqCase.sql_evals_per_s).padStart(9)}/s   jq ${String(jqCase.jq_evals_per_s).padStart(7)}/s (${String(jqCase.jq_evals_per_cpu_s).padStart(7)}/cpu-s), first jq result ${jqCase.jq_first_eval_ms} ms after compile`,
  );
  return result;
}
