// Values as JSON for tools (weir eval, weir test): byte strings that are valid UTF-8 become
// strings, others {"$hex": "…"}; a field whose value is undefined is still a field (EMQX keeps
// it in the record) and is shown as null.
import { isObj } from './value-types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function toJsonValue(v: unknown): unknown {
  if (v instanceof Uint8Array) {
    try {
      return utf8.decode(v);
    } catch {
      return { $hex: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') };
    }
  }
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : toJsonValue(x)));
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = v[k];
      Object.defineProperty(out, k, { value: x === undefined ? null : toJsonValue(x), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return null;
  return v;
}

/** `{"$hex": "…"}` or `{"$base64": "…"}` → bytes, anything else as it is (the inverse, for payloads given to tools). */
export function fromJsonBytes(v: unknown): unknown {
  if (isObj(v) && Object.keys(v).length === 1) {
    if (typeof v.$hex === 'string') return Buffer.from(v.$hex, 'hex');
    if (typeof v.$base64 === 'string') return Buffer.from(v.$base64, 'base64');
  }
  return v;
}
