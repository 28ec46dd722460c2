// EMQX's schema registry functions: schema_decode / schema_encode / schema_check over the schemas
// of weir.yaml's `schemas:`, and spb_decode / spb_encode for Sparkplug B (with EMQX's older names
// sparkplug_decode / sparkplug_encode as aliases that behave as the new ones). The rule engine
// knows no schema library: the codecs come in through PayloadSchemas, which src/schemas/
// implements, so a rule compiled without them fails on a call with a clear message.
import { RuleEvalError } from '../errors.js';
import { rawPayloadOf } from '../compile/context.js';
import type { Scope } from '../compile/scope.js';
import { needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

/** What the schema functions need from the registry (src/schemas/registry.ts implements it). */
export interface PayloadSchemas {
  /** Whether a schema of that name is configured (a literal name is checked when the rule is compiled). */
  has(name: string): boolean;
  /** Loads what Sparkplug B needs (its .proto, protobufjs); run when a rule calling spb_* is compiled. */
  prepareSparkplug(): void;
  decode(name: string, payload: Buffer, messageType: string | undefined): unknown;
  encode(name: string, value: unknown, messageType: string | undefined): Buffer;
  /** Decodes a Sparkplug B payload; `topic` resolves metric aliases from the edge node's last birth. */
  spbDecode(payload: Buffer, topic: string): unknown;
  spbEncode(value: unknown): Buffer;
}

/**
 * The bytes of a payload argument: the message's own bytes when the argument is its payload (no
 * copy), else text as its UTF-8 bytes (weir keeps valid UTF-8 payloads as text).
 */
function payloadBytes(fn: string, s: Scope, v: unknown): Buffer {
  const own = s.event.payload;
  if (Buffer.isBuffer(own) && (v === own || v === rawPayloadOf(s.ctx))) return own;
  return bytesOf(fn, v);
}

function bytesOf(fn: string, v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v instanceof Uint8Array) return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw new RuleEvalError('rule.type_error', `${fn}: the payload must be a binary, got ${v === undefined ? 'undefined' : typeof v}`);
}

/** Runs a codec call; its failure becomes the message's evaluation error (rule.schema_error). */
function run<T>(fn: string, call: () => T): T {
  try {
    return call();
  } catch (err) {
    if (err instanceof RuleEvalError) throw err;
    throw new RuleEvalError('rule.schema_error', `${fn}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

const NONE: PayloadSchemas = {
  has: () => false,
  prepareSparkplug: () => {},
  decode: (name) => {
    throw new RuleEvalError('rule.schema_error', `no schema named '${name}' (schemas: none)`);
  },
  encode: (name) => {
    throw new RuleEvalError('rule.schema_error', `no schema named '${name}' (schemas: none)`);
  },
  spbDecode: () => {
    throw new RuleEvalError('rule.schema_error', 'Sparkplug B needs the schema registry (compile the rule with it)');
  },
  spbEncode: () => {
    throw new RuleEvalError('rule.schema_error', 'Sparkplug B needs the schema registry (compile the rule with it)');
  },
};

/** The schema functions over `schemas` (without: every call fails, for a registry with no schemas). */
export function schemaFunctions(schemas: PayloadSchemas = NONE): FunctionSpec[] {
  const knownName = (value: unknown): void => {
    if (typeof value === 'string' && !schemas.has(value)) throw new RuleEvalError('rule.schema_error', `no schema named '${value}' in weir.yaml's schemas:`);
  };
  const messageType = (fn: string, v: unknown): string | undefined => (v === undefined ? undefined : needStr(fn, v));
  const sparkplug = { scoped: true, prepare: () => schemas.prepareSparkplug() } as const;
  const spbDecode = (s: Scope, payload: unknown) => run('spb_decode', () => schemas.spbDecode(payloadBytes('spb_decode', s, payload), s.event.topic));
  const spbEncode = (value: unknown) => run('spb_encode', () => schemas.spbEncode(value));
  return [
    ...def(
      'schema',
      'schema_decode(string, binary, string?): any',
      "Decodes a payload with a schema of weir.yaml's `schemas:` (protobuf: the message type, default the schema's message_type; avro; json: parse and validate).",
      (s: Scope, name: unknown, payload: unknown, type: unknown) =>
        run('schema_decode', () =>
          schemas.decode(needStr('schema_decode', name), payloadBytes('schema_decode', s, payload), messageType('schema_decode', type)),
        ),
      { scoped: true, literalArgs: { 0: knownName } },
    ),
    ...def(
      'schema',
      'schema_encode(string, map, string?): binary',
      'Encodes a map with a schema (protobuf, avro; json: the JSON text, validated).',
      (name: unknown, value: unknown, type: unknown) =>
        run('schema_encode', () => schemas.encode(needStr('schema_encode', name), value, messageType('schema_encode', type))),
      { literalArgs: { 0: knownName } },
    ),
    ...def(
      'schema',
      'schema_check(string, any, string?): bool',
      'Whether a payload decodes (and validates) with a schema; given a map, whether it encodes (validates, for json).',
      (name: unknown, payload: unknown, type: unknown) => {
        const n = needStr('schema_check', name);
        const t = messageType('schema_check', type);
        // As EMQX: an unknown schema is an error, not a payload that fails the check.
        if (!schemas.has(n)) knownName(n);
        try {
          if (typeof payload === 'string' || payload instanceof Uint8Array) schemas.decode(n, bytesOf('schema_check', payload), t);
          else schemas.encode(n, payload, t);
          return true;
        } catch {
          return false;
        }
      },
      { literalArgs: { 0: knownName } },
    ),
    ...def(
      'schema',
      'spb_decode(binary): map',
      'Decodes a Sparkplug B payload as EMQX does (bytes_value as base64); NDATA/DDATA metrics get their names from the edge node’s last NBIRTH/DBIRTH aliases.',
      spbDecode,
      { ...sparkplug, aliases: ['sparkplug_decode'] },
    ),
    ...def('schema', 'spb_encode(map): binary', 'Encodes a map as a Sparkplug B payload (bytes_value given as base64), as EMQX does.', spbEncode, {
      prepare: sparkplug.prepare,
      aliases: ['sparkplug_encode'],
    }),
  ];
}
