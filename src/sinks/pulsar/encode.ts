// Turns one rule output into a Pulsar message: payload, key, properties and event time from the
// action's templates (compiled once by bind()). Throwing here dead-letters that output only.
import { WeirError } from '../../errors.js';
import { compileTemplate } from '../../rules/index.js';
import type { OutputRecord, RuleEvent } from '../../rules/index.js';
import type { SinkInput } from '../types.js';
import type { PulsarAction } from './spec.js';
import type { OutgoingMessage } from './transport.js';

type Template = (record: OutputRecord, event?: RuleEvent) => unknown;

/** Bytes and strings as they are; anything else as JSON (byte strings inside as UTF-8 text). */
function toBytes(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v === undefined) return Buffer.alloc(0);
  return Buffer.from(JSON.stringify(plain(v)), 'utf8');
}

function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = plain(x);
    return out;
  }
  return v;
}

function toText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  if (v !== null && typeof v === 'object') return JSON.stringify(plain(v));
  return String(v);
}

function toEventTime(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(n) || n < 0) throw new WeirError('sink.pulsar.bad_event_time', `event_time must be epoch milliseconds or a date, got ${JSON.stringify(v)}`);
  return Math.trunc(n);
}

export type MessageEncoder = (input: SinkInput) => OutgoingMessage;

export function compileEncoder(action: PulsarAction): MessageEncoder {
  const key: Template | undefined = action.key ? compileTemplate(action.key) : undefined;
  const props: Array<[string, Template]> = Object.entries(action.properties ?? {}).map(([k, t]) => [k, compileTemplate(t)]);
  const eventTime: Template | undefined = action.event_time ? compileTemplate(action.event_time) : undefined;
  const payload: Template | undefined = action.payload ? compileTemplate(action.payload) : undefined;
  return ({ record, event }) => {
    const msg: { payload: Buffer; key?: string; properties?: Record<string, string>; eventTime?: number } = {
      payload: payload ? toBytes(payload(record, event)) : Buffer.from(JSON.stringify(plain(record)), 'utf8'),
    };
    if (key) {
      const k = key(record, event);
      if (k !== undefined && k !== null && k !== '') msg.key = toText(k);
    }
    if (props.length > 0) {
      const p: Record<string, string> = {};
      for (const [name, t] of props) {
        const v = t(record, event);
        if (v !== undefined && v !== null) p[name] = toText(v);
      }
      msg.properties = p;
    }
    if (eventTime) {
      const t = toEventTime(eventTime(record, event));
      if (t !== undefined) msg.eventTime = t;
    }
    return msg;
  };
}
