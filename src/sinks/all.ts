// The one explicit list of sink types. No registration by import side effect: a sink exists when
// it is listed here.
import { kafkaSink } from './kafka/index.js';
import { postgresSink } from './postgres/index.js';
import { pulsarSink } from './pulsar/index.js';
import type { SinkType } from './types.js';

export const ALL_SINK_TYPES: readonly SinkType[] = [postgresSink, kafkaSink, pulsarSink];
