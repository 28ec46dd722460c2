// The schema registry of weir.yaml's `schemas:`: each named schema loaded from its file (paths
// relative to weir.yaml) with the library of its type, loaded only when a schema of that type is
// configured (libraries.ts). Built by the config loader at start, by `weir check`, and again with
// each rule reload; it gives the rule engine's schema functions their codecs (PayloadSchemas) and
// a rule's payload_schema its check. The Sparkplug alias state is passed in, so that it outlives
// a reload.
import { resolve } from 'node:path';
import type { Type as AvroType } from 'avsc';
import type { ValidateFunction } from 'ajv';
import type { Root, Type } from 'protobufjs';
import type { PayloadSchemas } from '../rules/functions/schema.js';
import { decodeAvro, encodeAvro, loadAvro } from './avro.js';
import { decodeJsonSchema, encodeJsonSchema, loadJsonSchema } from './json-schema.js';
import { decodeMessage, encodeMessage, loadProto, messageType } from './protobuf.js';
import { SchemaLoadError } from './schema-load-error.js';
import { spbDecode, spbEncode, sparkplugPayload } from './sparkplug.js';
import type { SparkplugAliases } from './sparkplug-aliases.js';

export type SchemaType = 'protobuf' | 'avro' | 'json';

/** One entry of `schemas:` as validated (config/schema.ts SchemaSpec). */
export interface SchemaEntry {
  readonly type: SchemaType;
  readonly file: string;
  readonly message_type?: string;
}

type Codec =
  | { type: 'protobuf'; root: Root; defaultType: Type | undefined; types: Map<string, Type> }
  | { type: 'avro'; avro: AvroType }
  | { type: 'json'; validate: ValidateFunction };

/** A schema that did not load: its name, and where its parser put the problem. */
export interface SchemaProblem {
  readonly name: string;
  readonly message: string;
  readonly file: string;
  readonly line: number | undefined;
  /** The problem is in the entry's message_type, not in its file. */
  readonly key?: 'message_type';
}

export class SchemaRegistry implements PayloadSchemas {
  private constructor(
    private readonly codecs: ReadonlyMap<string, Codec>,
    readonly sparkplugAliases: SparkplugAliases,
  ) {}

  /** Loads every entry (files relative to `baseDir`); the ones that fail are left out and reported. */
  static load(
    entries: Readonly<Record<string, SchemaEntry>>,
    baseDir: string,
    aliases: SparkplugAliases,
  ): { registry: SchemaRegistry; problems: SchemaProblem[] } {
    const codecs = new Map<string, Codec>();
    const problems: SchemaProblem[] = [];
    for (const [name, entry] of Object.entries(entries)) {
      const file = resolve(baseDir, entry.file);
      try {
        codecs.set(name, loadCodec(entry, file));
      } catch (err) {
        if (err instanceof SchemaLoadError) problems.push({ name, message: err.message, file: err.file, line: err.line });
        else if (err instanceof MessageTypeError) problems.push({ name, message: err.message, file, line: undefined, key: 'message_type' });
        else problems.push({ name, message: err instanceof Error ? err.message : String(err), file, line: undefined });
      }
    }
    return { registry: new SchemaRegistry(codecs, aliases), problems };
  }

  names(): string[] {
    return [...this.codecs.keys()];
  }

  has(name: string): boolean {
    return this.codecs.has(name);
  }

  /** Whether a payload can be checked against it without naming a message type (payload_schema). */
  checkable(name: string): boolean {
    const c = this.codecs.get(name);
    return c !== undefined && (c.type !== 'protobuf' || c.defaultType !== undefined);
  }

  prepareSparkplug(): void {
    sparkplugPayload();
  }

  private codec(name: string): Codec {
    const c = this.codecs.get(name);
    if (c === undefined) throw new Error(`no schema named '${name}' (schemas: ${this.names().join(', ') || 'none'})`);
    return c;
  }

  decode(name: string, payload: Buffer, type: string | undefined): unknown {
    const c = this.codec(name);
    switch (c.type) {
      case 'protobuf':
        return decodeMessage(protoType(c, name, type), payload);
      case 'avro':
        return decodeAvro(c.avro, payload);
      case 'json':
        return decodeJsonSchema(c.validate, payload);
    }
  }

  encode(name: string, value: unknown, type: string | undefined): Buffer {
    const c = this.codec(name);
    switch (c.type) {
      case 'protobuf':
        return encodeMessage(protoType(c, name, type), value);
      case 'avro':
        return encodeAvro(c.avro, value);
      case 'json':
        return encodeJsonSchema(c.validate, value);
    }
  }

  /**
   * The check of a rule's payload_schema: undefined when the payload decodes (and validates), else
   * the decoder's or validator's error.
   */
  check(name: string, payload: Buffer): string | undefined {
    try {
      this.decode(name, payload, undefined);
      return undefined;
    } catch (err) {
      return `${name}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  spbDecode(payload: Buffer, topic: string): unknown {
    return spbDecode(payload, topic, this.sparkplugAliases);
  }

  spbEncode(value: unknown): Buffer {
    return spbEncode(value);
  }
}

class MessageTypeError extends Error {}

function loadCodec(entry: SchemaEntry, file: string): Codec {
  switch (entry.type) {
    case 'protobuf': {
      const root = loadProto(file);
      let defaultType: Type | undefined;
      if (entry.message_type !== undefined) {
        try {
          defaultType = messageType(root, entry.message_type);
        } catch (err) {
          throw new MessageTypeError(err instanceof Error ? err.message : String(err));
        }
      }
      return { type: 'protobuf', root, defaultType, types: new Map() };
    }
    case 'avro':
      return { type: 'avro', avro: loadAvro(file) };
    case 'json':
      return { type: 'json', validate: loadJsonSchema(file) };
  }
}

/** The message type a protobuf call names, else the schema's message_type; looked up once per name. */
function protoType(c: Extract<Codec, { type: 'protobuf' }>, name: string, type: string | undefined): Type {
  if (type === undefined) {
    if (c.defaultType === undefined) throw new Error(`schema '${name}' has no message_type: name the message type in the call`);
    return c.defaultType;
  }
  let t = c.types.get(type);
  if (t === undefined) {
    t = messageType(c.root, type);
    c.types.set(type, t);
  }
  return t;
}
