// One rule's Kafka action, compiled once when rules load: its topic, key, value and header
// templates become closures; encode() turns one rule output into one Kafka record. An output that
// cannot become a record (bad topic name, missing value) throws, and the core dead-letters it.
import type { Message } from 'kafkajs';
import { KafkaError } from './errors.js';
import { compileTemplate } from '../../rules/index.js';
import { payloadText } from '../../rules/compile/context.js';
import type { OutputRecord } from '../../rules/types.js';
import { toStr } from '../../rules/values/to-str.js';
import { toBytes } from '../bytes.js';
import type { BoundAction, SinkInput } from '../types.js';
import { markRoundRobin } from './partitioner.js';
import type { KafkaAction } from './spec.js';

/** One record on its way to Kafka. */
export interface KafkaItem {
  readonly topic: string;
  readonly message: Message;
}

const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

export function checkTopicName(topic: string): string | undefined {
  if (!LEGAL_TOPIC.test(topic)) return `"${topic}" is not a legal Kafka topic name (1-249 of [a-zA-Z0-9._-])`;
  if (topic === '.' || topic === '..') return `"${topic}" is not a legal Kafka topic name`;
  return undefined;
}

export class EncodeError extends KafkaError {
  constructor(message: string) {
    super('sink.kafka.encode', message);
  }
}

export function bindKafkaAction(action: KafkaAction, ruleId: string): BoundAction<KafkaItem> {
  const staticTopic = !action.topic.includes('${');
  if (staticTopic) {
    const problem = checkTopicName(action.topic);
    if (problem) throw new KafkaError('sink.kafka.bad_topic', `rule ${ruleId}: topic: ${problem}`);
  }
  const topicOf = compileTemplate(action.topic);
  const keyOf = action.key === undefined ? undefined : compileTemplate(action.key);
  const valueTemplate = action.value === undefined ? undefined : compileTemplate(action.value);
  const headers = Object.entries(action.headers ?? {}).map(([name, t]) => [name, compileTemplate(t)] as const);
  const roundRobin = action.partitioner === 'round_robin';

  return {
    // The actions with this topic (or topic template) share a batch: each item carries its own
    // topic, key, headers and partitioner mark, and write() groups a batch by topic anyway.
    batchKey: `topic ${action.topic}`,
    encode({ record, event }: SinkInput): KafkaItem {
      const t = topicOf(record, event);
      const topic = typeof t === 'string' ? t : t === undefined || t === null ? '' : toStr(t);
      if (!staticTopic) {
        const problem = checkTopicName(topic);
        if (problem) throw new EncodeError(`topic template ${action.topic}: ${problem}`);
      }

      let key: Buffer | null = null;
      if (keyOf) {
        const k = keyOf(record, event);
        if (k !== undefined && k !== null && k !== '') key = toBytes(k);
      }

      let value: Buffer | null;
      if (valueTemplate) {
        const v = valueTemplate(record, event);
        if (v === undefined) throw new EncodeError(`value template ${action.value} gave no value`);
        value = v === null ? null : toBytes(v);
      } else {
        value = toBytes(record);
      }

      const message: Message = { key, value };
      if (headers.length > 0) {
        const h: Record<string, Buffer> = {};
        for (const [name, of] of headers) {
          const v = of(record, event);
          if (v !== undefined && v !== null) h[name] = toBytes(v);
        }
        message.headers = h;
      }
      if (roundRobin) markRoundRobin(message);
      return { topic, message };
    },
    describe: describeRecord,
  };
}

/** A record as its dead letter shows it: topic, key, headers and value as text (bytes when not UTF-8). */
function describeRecord({ topic, message }: KafkaItem): OutputRecord {
  const text = (v: Buffer | string | null | undefined) => (v === null || v === undefined ? null : payloadText(v));
  const out: OutputRecord = { topic, key: text(message.key ?? null) };
  if (message.headers) {
    out.headers = Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, text(Array.isArray(v) ? v[0] : v)]));
  }
  out.value = text(message.value);
  return out;
}
