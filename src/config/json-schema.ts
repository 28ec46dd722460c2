// JSON Schemas for editors, generated from the TypeBox schemas the loader validates with
// (config/schema.ts, config/common-spec.ts and each sink type's spec through sinks/registry.ts), so
// the editor and `weir check` never disagree on a key. `npm run schema` writes schema/*.json; a
// test fails when the committed files are stale.
//
// Two differences from the loader, both because an editor sees the file before the loader does:
// `sinks.<name>` becomes a oneOf by `type` (the loader picks the type's schema by hand), and in
// weir.yaml every value that is not free text also accepts a `${NAME}` / `${NAME:-default}`
// reference, since the loader interpolates the environment before it validates.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type, type TSchema } from '@sinclair/typebox';
import { PACKAGE_ROOT } from '../paths.js';
import { ALL_SINK_TYPES } from '../sinks/all.js';
import { actionSinkKeySpec, SinkCommonSpec } from './common-spec.js';
import { RuleFileSpec, WeirSpec } from './schema.js';

type JsonSchema = Record<string, unknown>;

const DRAFT = 'http://json-schema.org/draft-07/schema#';

/** An environment reference as config/yaml-source.ts interpolates it. */
const ENV_REF: JsonSchema = {
  type: 'string',
  pattern: '^\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}$',
  description: 'An environment variable, interpolated when weir loads the file: ${NAME} or ${NAME:-default}.',
};

/**
 * TypeBox schemas are JSON Schema plus symbol-keyed metadata; JSON drops the symbols. A key with a
 * default is required by the TypeBox schema only because the loader fills it in first: in the
 * file it is optional.
 */
function plain(schema: TSchema | JsonSchema): JsonSchema {
  return optionalDefaults(JSON.parse(JSON.stringify(schema)) as JsonSchema);
}

function optionalDefaults(node: JsonSchema): JsonSchema {
  for (const key of ['items', 'additionalProperties'] as const) {
    if (node[key] && typeof node[key] === 'object') optionalDefaults(node[key] as JsonSchema);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const n of (node[key] as JsonSchema[] | undefined) ?? []) optionalDefaults(n);
  for (const key of ['properties', 'patternProperties'] as const)
    for (const n of Object.values((node[key] as Record<string, JsonSchema> | undefined) ?? {})) optionalDefaults(n);
  const props = node.properties as Record<string, JsonSchema> | undefined;
  if (props && Array.isArray(node.required)) {
    node.required = (node.required as string[]).filter((k) => props[k]?.default === undefined);
    if ((node.required as string[]).length === 0) delete node.required;
  }
  return node;
}

function sinkSchema(t: (typeof ALL_SINK_TYPES)[number]): JsonSchema {
  const s = plain(Type.Composite([Type.Object(SinkCommonSpec), t.configSchema as never], { additionalProperties: false }));
  const props = s.properties as Record<string, JsonSchema>;
  props.type = { ...props.type, const: t.type, description: `The sink type: ${t.type}.` };
  delete (props.type as { examples?: unknown }).examples;
  return { title: `${t.type} sink`, ...s, required: [...new Set(['type', ...((s.required as string[] | undefined) ?? [])])] };
}

function actionSchema(t: (typeof ALL_SINK_TYPES)[number]): JsonSchema {
  const s = plain(Type.Composite([Type.Object({ sink: actionSinkKeySpec(t.type) }), t.actionSchema as never], { additionalProperties: false }));
  return { title: `${t.type} action`, ...s };
}

/**
 * A rule action, checked against its sink type's schema. The type is in weir.yaml, not in the
 * rule file, so the schema tells it by the keys only that type has (`table`: postgres, `topic`:
 * kafka…). A plain anyOf of the types would answer a misspelt key with every type's complaint and
 * "must match a schema in anyOf"; this way the error is the type's own: `colums` is not allowed,
 * `columns` is required. A key of no type at all is named by `propertyNames`; an action with none
 * of any type's own keys must still be one of the types. Valid exactly when the anyOf would be.
 */
function actionsByType(): { items: JsonSchema; definitions: Record<string, JsonSchema> } {
  const alternatives = ALL_SINK_TYPES.map(actionSchema);
  const names = ALL_SINK_TYPES.map((t) => `${t.type}_action`);
  const ref = (i: number): JsonSchema => ({ $ref: `#/definitions/${names[i]!}` });
  const keysOf = (a: JsonSchema) => Object.keys(a.properties as Record<string, unknown>);
  const own = alternatives.map((a) => keysOf(a).filter((k) => alternatives.every((b) => b === a || !keysOf(b).includes(k))));
  const hasAny = (keys: string[]): JsonSchema => ({ anyOf: keys.map((k) => ({ properties: { [k]: true }, required: [k] })) });
  const allKeys = [...new Set(alternatives.flatMap(keysOf))];
  const items: JsonSchema = {
    type: 'object',
    properties: { sink: { type: 'string', description: 'Name of a sink in weir.yaml.' } },
    required: ['sink'],
    propertyNames: { enum: allKeys },
    allOf: [
      ...own.flatMap((keys, i) => (keys.length ? [{ if: hasAny(keys), then: ref(i) }] : [])),
      { if: { not: hasAny(own.flat()) }, then: { anyOf: alternatives.map((_a, i) => ref(i)) } },
    ],
  };
  return { items, definitions: Object.fromEntries(names.map((n, i) => [n, alternatives[i]!])) };
}

/** In weir.yaml: lets every value that is not free text also be a `${NAME}` reference. */
function allowEnvRefs(node: JsonSchema): JsonSchema {
  if (node.oneOf) return { ...node, oneOf: (node.oneOf as JsonSchema[]).map(allowEnvRefs) };
  if (node.type === 'object' || node.type === 'array') {
    const out: JsonSchema = { ...node };
    if (node.properties) out.properties = mapValues(node.properties as Record<string, JsonSchema>, allowEnvRefs);
    if (node.patternProperties) out.patternProperties = mapValues(node.patternProperties as Record<string, JsonSchema>, allowEnvRefs);
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      out.additionalProperties = allowEnvRefs(node.additionalProperties as JsonSchema);
    if (node.items) out.items = allowEnvRefs(node.items as JsonSchema);
    return out;
  }
  const freeText = node.type === 'string' && node.pattern === undefined && node.const === undefined;
  if (freeText) return node;
  const { description, default: def, examples, ...rest } = node;
  const wrapped: JsonSchema = { anyOf: [rest, ENV_REF] };
  if (description !== undefined) wrapped.description = description;
  if (def !== undefined) wrapped.default = def;
  if (examples !== undefined) wrapped.examples = examples;
  return wrapped;
}

function mapValues(o: Record<string, JsonSchema>, f: (v: JsonSchema) => JsonSchema): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

export function weirJsonSchema(): JsonSchema {
  const s = plain(WeirSpec);
  const props = s.properties as Record<string, JsonSchema>;
  const sinks = props.sinks!;
  const [namePattern] = Object.keys((sinks.patternProperties as Record<string, unknown>) ?? { '^[a-z][a-z0-9_]*$': null });
  props.sinks = {
    type: 'object',
    description: sinks.description,
    default: sinks.default,
    propertyNames: { pattern: namePattern },
    additionalProperties: { oneOf: ALL_SINK_TYPES.map(sinkSchema) },
  };
  return { $schema: DRAFT, title: 'weir.yaml', ...allowEnvRefs(s) };
}

export function ruleJsonSchema(): JsonSchema {
  const s = plain(RuleFileSpec);
  const props = s.properties as Record<string, JsonSchema>;
  const actions = actionsByType();
  props.actions = {
    ...props.actions,
    description: "Where the rule's outputs go: each action names a sink of weir.yaml and carries that sink type's settings.",
    items: actions.items,
  };
  return { $schema: DRAFT, title: 'weir rule file', ...s, definitions: actions.definitions };
}

export const SCHEMA_DIR = join(PACKAGE_ROOT, 'schema');

/** The files `npm run schema` writes, by name. */
export function schemaFiles(): Record<string, string> {
  const text = (o: JsonSchema) => `${JSON.stringify(o, null, 2)}\n`;
  return { 'weir.schema.json': text(weirJsonSchema()), 'rule.schema.json': text(ruleJsonSchema()) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  mkdirSync(SCHEMA_DIR, { recursive: true });
  for (const [name, text] of Object.entries(schemaFiles())) {
    writeFileSync(join(SCHEMA_DIR, name), text);
    process.stdout.write(`wrote schema/${name}\n`);
  }
}
