// Sparkplug B payloads as EMQX's spb_decode / spb_encode give and take them: the Payload message
// of sparkplug_b.proto (written from the specification, beside this file) decoded with the
// protobuf mapping of protobuf.ts, each metric's bytes_value as base64 text (EMQX's fix of the
// older sparkplug_decode, whose raw bytes could not be written as JSON), and NDATA/DDATA metrics
// given the name their alias had in the last birth (sparkplug-aliases.ts).
import type { Root, Type } from 'protobufjs';
import { PACKAGE_ROOT } from '../paths.js';
import { join } from 'node:path';
import { decodeMessage, encodeMessage, loadProto, messageType } from './protobuf.js';
import type { SparkplugAliases } from './sparkplug-aliases.js';

/** The .proto, shipped with the package (package.json files, Dockerfile) as src/schemas/sparkplug_b.proto. */
export const SPARKPLUG_PROTO = join(PACKAGE_ROOT, 'src', 'schemas', 'sparkplug_b.proto');

let payloadType: Type | undefined;

/** The Payload type, loaded (with protobufjs) on first use. */
export function sparkplugPayload(): Type {
  if (payloadType === undefined) {
    const root: Root = loadProto(SPARKPLUG_PROTO);
    payloadType = messageType(root, 'org.eclipse.tahu.protobuf.Payload');
  }
  return payloadType;
}

export function spbDecode(bytes: Buffer, topic: string, aliases: SparkplugAliases): Record<string, unknown> {
  const term = decodeMessage(sparkplugPayload(), bytes);
  const metrics = term.metrics as Record<string, unknown>[];
  const nameOf = aliases.observe(topic, metrics);
  for (const m of metrics) {
    if (Buffer.isBuffer(m.bytes_value)) m.bytes_value = m.bytes_value.toString('base64');
    if (nameOf !== undefined && m.name === undefined && typeof m.alias === 'number') {
      const name = nameOf(m.alias);
      if (name !== undefined) m.name = name;
    }
  }
  return term;
}

export function spbEncode(value: unknown): Buffer {
  if (typeof value === 'object' && value !== null && Array.isArray((value as { metrics?: unknown }).metrics)) {
    const v = value as Record<string, unknown>;
    const metrics = (v.metrics as unknown[]).map((m) =>
      typeof m === 'object' && m !== null && typeof (m as { bytes_value?: unknown }).bytes_value === 'string'
        ? { ...(m as Record<string, unknown>), bytes_value: Buffer.from((m as { bytes_value: string }).bytes_value, 'base64') }
        : m,
    );
    return encodeMessage(sparkplugPayload(), { ...v, metrics });
  }
  return encodeMessage(sparkplugPayload(), value);
}
