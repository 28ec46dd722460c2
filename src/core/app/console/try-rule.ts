// Try it (POST /api/try): a rule's SQL, or a running rule, over a sample event, without writing.
// SQL goes through `weir eval`'s own evaluation (rules/tools/eval-lines.ts: same compile cache,
// same event fields, same output values) with weir.yaml's schemas as the running rules have them,
// so the page shows what `weir eval -c weir.yaml` prints for the same input. A running rule gets its event as `weir run` would make it from a received message
// (test-event.ts: weir.yaml's broker settings, as `weir test` does), its payload_format check,
// and each output rendered by each action's own encoder (the row's columns, the message's key and
// payload) as the sink would write it. Both run under the rules' evaluation budget (the compiled
// rule checks it), so a hostile SQL or payload ends with rule.limit.
import { functionsWith } from '../../../config/load.js';
import { createMessageContext } from '../../../rules/index.js';
import { RuleError } from '../../../rules/errors.js';
import { evalInput } from '../../../rules/tools/eval-lines.js';
import { toJsonValue } from '../../../rules/values/json-out.js';
import { errorText } from '../../../errors.js';
import { describe } from '../../path/sink-runner.js';
import { testEventMaker } from '../test-event.js';
import type { TryResult } from './api.js';
import type { ConsoleDeps } from './deps.js';
import { numberField, objectField, RequestError, stringField } from './request-error.js';

/** SQL longer than this is refused before compiling (the rules' own limits apply below it). */
const MAX_SQL_CHARS = 64 * 1024;

export async function tryRule(d: ConsoleDeps, body: unknown): Promise<TryResult> {
  const o = objectField(body, 'the request');
  const sql = stringField(o, 'sql');
  const ruleId = stringField(o, 'rule');
  if ((sql === undefined) === (ruleId === undefined)) throw new RequestError(400, 'give either "sql" or "rule" (the id of a running rule)');
  if (sql !== undefined && sql.length > MAX_SQL_CHARS) throw new RequestError(400, `"sql" is longer than ${MAX_SQL_CHARS} characters`);
  const event = eventFields(objectField(o.event, '"event"'));
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  if (sql !== undefined) {
    try {
      const r = await evalInput({ sql, event }, functionsWith(d.schemas()));
      return { matched: r.matched, outputs: r.outputs as unknown[], actions: [], elapsed_ms: elapsed() };
    } catch (err) {
      return { matched: false, outputs: [], actions: [], error: errorOf(err), elapsed_ms: elapsed() };
    }
  }
  const rule = d.pipeline.liveRules.find((r) => r.cfg.id === ruleId);
  if (!rule) throw new RequestError(404, `no running rule '${ruleId}'`);
  const made = testEventMaker(d.cfg.broker, d.cfg.node)(event);
  const ctx = createMessageContext(made);
  if (rule.cfg.payloadFormat === 'json' && ctx.decodedPayload() === undefined) {
    const error = { message: 'invalid_payload: the payload is not JSON (the rule has payload_format: json); weir run dead-letters such a message' };
    return { matched: false, outputs: [], actions: [], error, elapsed_ms: elapsed() };
  }
  let result: Awaited<ReturnType<typeof rule.cfg.compiled.evaluate>>;
  try {
    result = await rule.cfg.compiled.evaluate(ctx, rule.cfg.id);
  } catch (err) {
    return { matched: false, outputs: [], actions: [], error: errorOf(err), elapsed_ms: elapsed() };
  }
  const outputs = result.matched ? result.outputs : [];
  const actions = rule.actions.map(({ runner, handle }) => {
    const writes: unknown[] = [];
    try {
      for (const record of outputs) {
        const item = handle.bound.encode({ record, event: made, ruleId: rule.cfg.id });
        writes.push(toJsonValue(describe(handle.bound, item) ?? record));
      }
      return { sink: runner.name, type: runner.cfg.sinkType.type, writes };
    } catch (err) {
      // weir run dead-letters such an output (encode_error).
      return { sink: runner.name, type: runner.cfg.sinkType.type, writes, error: `encode_error: ${errorText(err)}` };
    }
  });
  return { matched: result.matched, outputs: toJsonValue(outputs) as unknown[], actions, elapsed_ms: elapsed() };
}

/** The event of a Try request as `weir eval`'s event fields (docs/rules.md), checked. */
function eventFields(e: Record<string, unknown>): Record<string, unknown> {
  const topic = stringField(e, 'topic', 'event.topic');
  if (!topic) throw new RequestError(400, 'event.topic must be a non-empty string');
  const payload = stringField(e, 'payload', 'event.payload') ?? '';
  const encoding = stringField(e, 'payload_encoding', 'event.payload_encoding') ?? 'text';
  if (encoding !== 'text' && encoding !== 'base64') throw new RequestError(400, `event.payload_encoding is text or base64, not '${encoding}'`);
  const qos = numberField(e, 'qos', 'event.qos');
  if (qos !== undefined && qos !== 0 && qos !== 1 && qos !== 2) throw new RequestError(400, 'event.qos is 0, 1 or 2');
  const props = e.user_properties === undefined ? undefined : objectField(e.user_properties, 'event.user_properties');
  for (const [k, v] of Object.entries(props ?? {})) if (typeof v !== 'string') throw new RequestError(400, `event.user_properties.${k} must be a string`);
  const fields: Record<string, unknown> = {
    topic,
    payload: encoding === 'base64' ? { $hex: Buffer.from(payload, 'base64').toString('hex') } : payload,
  };
  if (qos !== undefined) fields.qos = qos;
  const clientid = stringField(e, 'clientid', 'event.clientid');
  if (clientid !== undefined) fields.clientid = clientid;
  const username = stringField(e, 'username', 'event.username');
  if (username !== undefined) fields.username = username;
  if (props) fields.pub_props = { 'User-Property': props };
  return fields;
}

/** An error for the page: a compile error with its line and column in the SQL. */
function errorOf(err: unknown): NonNullable<TryResult['error']> {
  if (err instanceof RuleError && err.line > 0) return { message: `${err.code}: ${err.reason}`, line: err.line, column: err.col };
  return { message: errorText(err) };
}
