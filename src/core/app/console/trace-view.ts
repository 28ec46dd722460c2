// Trace (POST /api/trace starts one, GET /api/trace reads it): the runtime's Tracer
// (core/path/trace.ts) as api.ts shapes it, payloads as text when they are UTF-8, else base64.
import { toJsonValue } from '../../../rules/values/json-out.js';
import { MAX_MESSAGES, type Tracer } from '../../path/trace.js';
import type { TraceState } from './api.js';
import type { ConsoleDeps } from './deps.js';
import { numberField, objectField, RequestError, stringField } from './request-error.js';

export function startTrace(d: ConsoleDeps, body: unknown): TraceState {
  const o = objectField(body, 'the request');
  const rule = stringField(o, 'rule');
  if (!rule) throw new RequestError(400, '"rule" must name a running rule');
  if (!d.pipeline.liveRules.some((r) => r.cfg.id === rule)) throw new RequestError(404, `no running rule '${rule}'`);
  const count = numberField(o, 'count') ?? 10;
  if (!Number.isInteger(count) || count < 1 || count > MAX_MESSAGES) throw new RequestError(400, `"count" is a whole number from 1 to ${MAX_MESSAGES}`);
  d.tracer.start(rule, count);
  return traceState(d.tracer);
}

export function traceState(tracer: Tracer): TraceState {
  const s = tracer.last;
  if (!s) return { wanted: 0, messages: [], active: false };
  return {
    rule: s.rule,
    wanted: s.wanted,
    active: !s.ended,
    messages: s.messages.map((m) => {
      const text = utf8(m.payload);
      return {
        topic: m.topic,
        payload: text ?? m.payload.toString('base64'),
        payload_encoding: text === undefined ? 'base64' : 'text',
        steps: m.steps.map((st) => ({ ...st, detail: st.detail === undefined ? undefined : toJsonValue(st.detail) })),
      };
    }),
  };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function utf8(b: Buffer): string | undefined {
  try {
    return decoder.decode(b);
  } catch {
    return undefined;
  }
}
