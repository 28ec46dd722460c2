// Bytes of a rendered template value, the same for every sink that writes messages (Kafka,
// Pulsar): bytes and strings as they are, numbers and the rest as EMQX's str() prints them, maps
// and lists as JSON with byte strings inside as UTF-8 text.
import { toStr } from '../rules/to-str.js';

export function toBytes(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return Buffer.from(typeof v === 'string' ? v : toStr(v), 'utf8');
}
