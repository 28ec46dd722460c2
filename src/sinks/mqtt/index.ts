// The mqtt sink type: rule outputs republished to an MQTT broker (weir's own, or another).
import type { SinkType } from '../types.js';
import type { MqttItem } from './action.js';
import { MQTT_CODES } from './errors.js';
import { lintMqttAction } from './loop.js';
import { MqttSink } from './sink.js';
import { MqttActionSpec, MqttConfigSpec, lintMqttConfig, type MqttAction, type MqttConfig } from './spec.js';
import { verifyMqtt } from './verify.js';

export const mqttSinkType: SinkType<MqttConfig, MqttAction, MqttItem> = {
  type: 'mqtt',
  configSchema: MqttConfigSpec,
  actionSchema: MqttActionSpec,
  errorCodes: MQTT_CODES,
  lint: lintMqttConfig,
  lintAction: lintMqttAction,
  create: (cfg, deps) => new MqttSink(cfg, deps),
  verify: verifyMqtt,
};
