// Sink types by name. The core looks sinks up here and knows nothing of any driver's internals.
import { ALL_SINK_TYPES } from './all.js';
import type { SinkType } from './types.js';

const byType = new Map<string, SinkType>(ALL_SINK_TYPES.map((t) => [t.type, t]));

export function sinkType(type: string): SinkType | undefined {
  return byType.get(type);
}

export function sinkTypeNames(): string[] {
  return [...byType.keys()];
}
