// Hostile payloads for the shipped telemetry rule (rules/telemetry.yaml): bytes a device, a broken
// gateway or an attacker may publish on device/<id>/telemetry. Each is built around a unique
// (device, seq), so a test can account for every message: stored as a row, or dead-lettered.
// Used by the poison-message tests and the fault suite; `fast-check` arbitraries in
// hostileArbitrary() generate variations of the same families.
import fc from 'fast-check';

/** What the shipped rule and table should make of a payload. */
export type HostileEnd = 'stored' | 'dead_lettered' | 'either';

export interface HostileKind {
  readonly name: string;
  readonly end: HostileEnd;
  /** The dead letter's reason when it is dead-lettered (undefined: any). */
  readonly reason?: string;
  payload(device: string, seq: number, ts: number): Buffer;
}

const sample = (device: string, seq: number, ts: number, extra: Record<string, unknown> = {}) => ({
  device,
  seq,
  ts,
  temp: 21.5,
  hum: 40,
  location: 'hall-3',
  ...extra,
});
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
/** A sample's JSON text with `fragment` spliced in as the value of `location`. */
const withRawLocation = (device: string, seq: number, ts: number, fragment: string) =>
  Buffer.from(`{"device":${JSON.stringify(device)},"seq":${seq},"ts":${ts},"temp":21.5,"hum":40,"location":${fragment}}`);

export const HOSTILE: readonly HostileKind[] = [
  // The message that stalled a replica: text columns cannot hold NUL, and jsonb refuses \u0000.
  { name: 'nul escape in a stored text value', end: 'dead_lettered', reason: 'rejected', payload: (d, s, t) => withRawLocation(d, s, t, '"a\\u0000b"') },
  { name: 'nul escape in an unused field', end: 'stored', payload: (d, s, t) => json(sample(d, s, t, { note: 'a\u0000b' })) },
  { name: 'nul escape in a key', end: 'stored', payload: (d, s, t) => json(sample(d, s, t, { 'k\u0000': 1 })) },
  { name: 'nul escape and no timestamp', end: 'dead_lettered', reason: 'rejected', payload: (_d, s) => json({ seq: s, note: 'a\u0000b' }) },
  // Bytes that are not UTF-8 inside a JSON string: never silently rewritten with U+FFFD.
  {
    name: 'invalid UTF-8 in a string',
    end: 'dead_lettered',
    reason: 'invalid_payload',
    payload: (d, s, t) =>
      Buffer.concat([Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"location":"`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]),
  },
  { name: 'lone surrogate escape', end: 'either', payload: (d, s, t) => withRawLocation(d, s, t, '"\\ud800"') },
  {
    name: '10,000-deep nesting in an unused field',
    end: 'stored',
    payload: (d, s, t) => Buffer.from(`${JSON.stringify(sample(d, s, t)).slice(0, -1)},"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
  },
  {
    name: '10,000-deep nesting in a stored value',
    end: 'either',
    payload: (d, s, t) => withRawLocation(d, s, t, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
  },
  {
    name: 'a number too big for bigint',
    end: 'dead_lettered',
    reason: 'rejected',
    payload: (d, _s, t) => Buffer.from(`{"device":"${d}","seq":123456789012345678901234567890,"ts":${t}}`),
  },
  { name: 'a number beyond double', end: 'either', payload: (d, s, t) => Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"temp":1e400}`) },
  { name: 'duplicate keys', end: 'stored', payload: (d, s, t) => Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"temp":1,"temp":2}`) },
  { name: 'empty payload', end: 'dead_lettered', reason: 'invalid_payload', payload: () => Buffer.alloc(0) },
  { name: 'JSON that is not an object', end: 'dead_lettered', reason: 'rejected', payload: (_d, s) => Buffer.from(`[${s}]`) },
  { name: 'truncated JSON', end: 'dead_lettered', reason: 'invalid_payload', payload: (d, s, t) => json(sample(d, s, t)).subarray(0, 20) },
  { name: 'a string where a number goes', end: 'dead_lettered', reason: 'rejected', payload: (d, s, t) => json(sample(d, s, t, { temp: 'hot' })) },
];

/** A payload larger than `limit`: dead-lettered as payload_too_large before any rule. */
export function oversizePayload(device: string, seq: number, ts: number, limit: number): Buffer {
  return json(sample(device, seq, ts, { location: 'x'.repeat(limit) }));
}

/**
 * Generated hostile payloads: a valid sample whose fields are replaced by strings with control
 * characters, NULs, lone surrogates and invalid UTF-8, deep or wide structures, extreme numbers,
 * or bytes cut short. Any of them may be stored or dead-lettered; none may stall the stream.
 */
export function hostileArbitrary(): fc.Arbitrary<(device: string, seq: number, ts: number) => Buffer> {
  const nasty = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udfff x', '\u0000\u0000', '\\u0000', '"', '\u2028'),
    fc.double(),
    fc.constantFrom(1e308, -1e308, 2 ** 63, -(2 ** 63), Number.MAX_SAFE_INTEGER + 2),
    fc.integer({ min: 1, max: 3000 }).map((n) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`) as unknown),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), { maxKeys: 5 }),
    fc.constant(null),
  );
  const field = fc.constantFrom('temp', 'hum', 'location', 'device', 'extra', '\u0000');
  const mangle = fc.constantFrom('none', 'invalid_utf8', 'truncate');
  return fc.tuple(field, nasty, mangle, fc.nat()).map(([f, v, how, cut]) => (device: string, seq: number, ts: number) => {
    const bytes = json(sample(device, seq, ts, { [f]: v }));
    if (how === 'invalid_utf8') {
      const at = bytes.indexOf(0x3a) + 1; // after the first ':' → inside the document, before a value
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0x22, 0xff, 0xfe, 0x22, 0x2c, 0x22, 0x7a, 0x22, 0x3a]), bytes.subarray(at)]);
    }
    if (how === 'truncate') return bytes.subarray(0, cut % Math.max(1, bytes.length));
    return bytes;
  });
}
