// Turns one rule output into a Pulsar message: payload, key, properties and event time from the
// action's templates (compiled once by bind()). Throwing here dead-letters that output only.
import { PulsarError } from './errors.js';
import { compileTemplate } from '../../rules/index.js';
import type { OutputRecord, RuleEvent } from '../../rules/index.js';
import type { SinkInput } from '../types.js';
import type { PulsarAction } from './spec.js';
import type { OutgoingMessage } from './transport.js';
import { WholeFloat } from '../../rules/values/floats.js';
import { toStr } from '../../rules/values/to-str.js';
import { toBytes } from '../bytes.js';
import { compileTextMap } from '../text-map.js';
import { payloadText } from '../../rules/compile/context.js';

type Template = (record: OutputRecord, event?: RuleEvent) => unknown;

function toEventTime(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n =
    typeof v === 'number'
      ? v
      : v instanceof WholeFloat
        ? v.value
        : typeof v === 'string' && /^\s*\d+\s*$/.test(v)
          ? Number(v)
          : typeof v === 'string'
            ? Date.parse(v)
            : NaN;
  if (!Number.isFinite(n) || n < 0)
    throw new PulsarError('sink.pulsar.bad_event_time', `event_time must be epoch milliseconds or a date, got ${JSON.stringify(v)}`);
  return Math.trunc(n);
}

/** A payload template that renders nothing sends an empty message. */
const payloadBytes = (v: unknown): Buffer => (v === undefined ? Buffer.alloc(0) : toBytes(v));

export type MessageEncoder = (input: SinkInput) => OutgoingMessage;

export function compileEncoder(action: PulsarAction): MessageEncoder {
  const key: Template | undefined = action.key ? compileTemplate(action.key) : undefined;
  const props = compileTextMap(action.properties);
  const eventTime: Template | undefined = action.event_time ? compileTemplate(action.event_time) : undefined;
  const payload: Template | undefined = action.payload ? compileTemplate(action.payload) : undefined;
  return ({ record, event }) => {
    const msg: { payload: Buffer; key?: string; properties?: Record<string, string>; eventTime?: number } = {
      payload: payload === undefined ? toBytes(record) : payloadBytes(payload(record, event)),
    };
    if (key) {
      const k = key(record, event);
      if (k !== undefined && k !== null && k !== '') msg.key = toStr(k);
    }
    if (props) msg.properties = props(record, event);
    if (eventTime) {
      const t = toEventTime(eventTime(record, event));
      if (t !== undefined) msg.eventTime = t;
    }
    return msg;
  };
}

/** A message as its dead letter shows it: key, properties, event time, payload as text (bytes when not UTF-8). */
export function describeMessage(msg: OutgoingMessage): OutputRecord {
  const out: OutputRecord = {};
  if (msg.key !== undefined) out.key = msg.key;
  if (msg.properties) out.properties = msg.properties;
  if (msg.eventTime) out.event_time = msg.eventTime;
  out.payload = payloadText(msg.payload);
  return out;
}
