// One rule's mqtt action, compiled once when rules load: its topic, qos, payload, property and
// user-property templates become closures; encode() turns one rule output into one PUBLISH. An
// output that cannot become one (an empty topic, a wildcard in it, a QoS other than 0 or 1, a
// missing payload) throws, and the core dead-letters that output alone.
import type { IClientPublishOptions } from 'mqtt';
import { compileTemplate } from '../../rules/index.js';
import { payloadText } from '../../rules/compile/context.js';
import type { OutputRecord } from '../../rules/types.js';
import { toStr } from '../../rules/values/to-str.js';
import { bodyBytes, toBytes } from '../bytes.js';
import { compileTextMap } from '../text-map.js';
import type { BoundAction, SinkInput } from '../types.js';
import { MqttError } from './errors.js';
import type { MqttAction } from './spec.js';

/** One PUBLISH on its way to the broker. */
export interface MqttItem {
  readonly topic: string;
  readonly payload: Buffer;
  readonly qos: 0 | 1;
  readonly retain: boolean;
  /** MQTT 5 properties (user properties included); undefined when there are none. */
  readonly properties?: IClientPublishOptions['properties'];
}

export class EncodeError extends MqttError {
  constructor(message: string) {
    super('sink.mqtt.encode', message);
  }
}

/** Why `topic` cannot be published to, or undefined. */
export function topicNameProblem(topic: string): string | undefined {
  if (topic.length === 0) return 'the topic is empty';
  if (topic.includes('+') || topic.includes('#')) return `"${topic}" has a wildcard (+ or #): a PUBLISH needs a topic name, not a filter`;
  if (topic.includes('\u0000')) return `"${topic}" has a NUL character`;
  if (Buffer.byteLength(topic, 'utf8') > 65535) return 'the topic is longer than 65535 bytes';
  return undefined;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : toStr(v));

export function bindMqttAction(action: MqttAction, ruleId: string): BoundAction<MqttItem> {
  const staticTopic = !action.topic.includes('${');
  if (staticTopic) {
    const problem = topicNameProblem(action.topic);
    if (problem) throw new MqttError('sink.mqtt.bad_topic', `rule ${ruleId}: topic: ${problem}`);
  }
  const topicOf = compileTemplate(action.topic);
  const qosOf = typeof action.qos === 'string' ? compileTemplate(action.qos) : undefined;
  const fixedQos = typeof action.qos === 'number' ? action.qos : 1;
  const payloadOf = action.payload === undefined ? undefined : compileTemplate(action.payload);
  const p = action.properties ?? {};
  const contentType = p.content_type === undefined ? undefined : compileTemplate(p.content_type);
  const responseTopic = p.response_topic === undefined ? undefined : compileTemplate(p.response_topic);
  const correlation = p.correlation_data === undefined ? undefined : compileTemplate(p.correlation_data);
  const users = compileTextMap(action.user_properties);
  const hasProperties =
    p.payload_format_indicator !== undefined || p.message_expiry_interval !== undefined || contentType || responseTopic || correlation || users;

  return {
    // Every item carries its own topic, QoS and properties: one batch stream per sink is enough.
    batchKey: 'publish',
    encode({ record, event }: SinkInput): MqttItem {
      const topic = text(topicOf(record, event));
      if (!staticTopic) {
        const problem = topicNameProblem(topic);
        if (problem) throw new EncodeError(`topic template ${action.topic}: ${problem}`);
      }
      let qos = fixedQos;
      if (qosOf) {
        const q = text(qosOf(record, event));
        if (q !== '0' && q !== '1') throw new EncodeError(`qos template ${String(action.qos)} gave ${JSON.stringify(q)}, not 0 or 1`);
        qos = q === '0' ? 0 : 1;
      }
      const payload = bodyBytes(payloadOf, record, event);
      if (payload === undefined) throw new EncodeError(`payload template ${action.payload} gave no value`);
      let properties: MqttItem['properties'];
      if (hasProperties) {
        properties = {};
        if (p.payload_format_indicator !== undefined) properties.payloadFormatIndicator = p.payload_format_indicator;
        if (p.message_expiry_interval !== undefined) properties.messageExpiryInterval = p.message_expiry_interval;
        if (contentType) properties.contentType = text(contentType(record, event));
        const rt = responseTopic ? text(responseTopic(record, event)) : '';
        if (rt !== '') {
          const problem = topicNameProblem(rt);
          if (problem) throw new EncodeError(`response_topic template ${p.response_topic}: ${problem}`);
          properties.responseTopic = rt;
        }
        const cd = correlation ? correlation(record, event) : undefined;
        if (cd !== undefined && cd !== null && cd !== '') properties.correlationData = toBytes(cd);
        if (users) properties.userProperties = users(record, event);
      }
      return { topic, payload, qos, retain: action.retain, properties };
    },
    describe: describePublish,
  };
}

/** A PUBLISH as its dead letter shows it: topic, QoS, retain, properties, and the payload as text (bytes when not UTF-8). */
function describePublish(item: MqttItem): OutputRecord {
  const out: OutputRecord = { topic: item.topic, qos: item.qos, retain: item.retain };
  if (item.properties) {
    const { correlationData, ...rest } = item.properties;
    out.properties = correlationData === undefined ? { ...rest } : { ...rest, correlationData: payloadText(correlationData) };
  }
  out.payload = payloadText(item.payload);
  return out;
}
