// The one explicit list of sink types. No registration by import side effect: a sink exists when
// it is listed here.
import { httpSinkType } from './http/index.js';
import { kafkaSinkType } from './kafka/index.js';
import { mqttSinkType } from './mqtt/index.js';
import { postgresSinkType } from './postgres/index.js';
import { pulsarSinkType } from './pulsar/index.js';
import type { SinkType } from './types.js';

export const ALL_SINK_TYPES: readonly SinkType[] = [postgresSinkType, kafkaSinkType, pulsarSinkType, mqttSinkType, httpSinkType];
