// Each sink folder's sample.yaml and the settings reference in its README.md, generated from the
// sink type's spec (its configSchema and actionSchema, plus the keys every sink shares), so the
// docs cannot drift from what the loader accepts. `npm run sink-docs` writes them;
// test/sinks/docs.test.ts fails when a file differs from what this renders, and loads every
// sample through the loader `weir check` uses. Only the part of README.md between the markers is
// generated: the prose around it is the sink author's.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { actionSinkKeySpec, SinkCommonSpec } from '../config/common-spec.js';
import { ALL_SINK_TYPES } from './all.js';
import type { SinkType } from './types.js';

export const SINKS_DIR = dirname(fileURLToPath(import.meta.url));
export const BEGIN = '<!-- BEGIN settings reference: generated from spec.ts by `npm run sink-docs`; edit the spec, not this -->';
export const END = '<!-- END settings reference -->';

/** The JSON Schema keywords of a TypeBox schema that this file reads. */
interface Node {
  readonly type?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly examples?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly Node[];
  readonly items?: Node;
  readonly properties?: Readonly<Record<string, Node>>;
  readonly patternProperties?: Readonly<Record<string, Node>>;
  readonly required?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
}

/** One field of a spec, in the order the spec declares it, nested keys after their parent. */
interface Field {
  /** `batching.max_messages`; a map's keys are written `<name>` (`hypertables.<name>.chunk_interval`). */
  readonly key: string;
  readonly node: Node;
  readonly required: boolean;
  readonly depth: number;
}

/** The sink block's fields: the type's own, then those every sink has (batch, retry, max_in_flight). */
function configFields(t: SinkType): Field[] {
  const { type: _type, ...common } = SinkCommonSpec;
  return [...fields(t.configSchema as Node), ...fields({ properties: common as Record<string, Node> })];
}

function actionFields(t: SinkType): Field[] {
  return fields(t.actionSchema as Node);
}

/** Every documented key of a sink type, with its description: what the reference tables list. */
export function specKeys(t: SinkType): Array<{ key: string; description: string | undefined }> {
  return [...configFields(t), ...actionFields(t)].map((f) => ({ key: f.key, description: f.node.description }));
}

function fields(object: Node, prefix = '', depth = 0): Field[] {
  const out: Field[] = [];
  for (const [name, node] of Object.entries(object.properties ?? {})) {
    const key = `${prefix}${name}`;
    out.push({ key, node, required: (object.required ?? []).includes(name) && node.default === undefined, depth });
    if (node.properties) out.push(...fields(node, `${key}.`, depth + 1));
    const value = mapValue(node);
    if (value?.properties) out.push(...fields(value, `${key}.<name>.`, depth + 1));
  }
  return out;
}

/** The schema of a map's values (Type.Record), or undefined when `node` is not a map. */
function mapValue(node: Node): Node | undefined {
  return node.patternProperties ? Object.values(node.patternProperties)[0] : undefined;
}

function enumValues(node: Node): unknown[] | undefined {
  const values = node.anyOf?.map((n) => n.const);
  return values?.length && values.every((v) => v !== undefined) ? values : undefined;
}

function typeName(node: Node): string {
  const options = enumValues(node);
  if (options) return options.map((o) => `\`${String(o)}\``).join(' \\| ');
  const value = mapValue(node);
  if (value) return `map of ${value.properties ? 'settings' : typeName(value)}`;
  if (node.type === 'array') return `list of ${node.items ? typeName(node.items) : 'values'}`;
  if (node.properties) return 'settings';
  const { minimum: min, maximum: max } = node;
  const range = min !== undefined && max !== undefined ? ` ${min}–${max}` : min !== undefined ? ` ≥ ${min}` : max !== undefined ? ` ≤ ${max}` : '';
  return `${node.type ?? 'value'}${range}`;
}

/** A value as it is written in YAML on one line (`[a, b]`, `{}`, `-1`). */
function inline(v: unknown): string {
  // Flow style only for collections: in it `${ENV}` would need quotes it does not need as a plain scalar.
  const collection = v !== null && typeof v === 'object';
  return stringify(v, { collectionStyle: collection ? 'flow' : 'any', flowCollectionPadding: false, lineWidth: 0 }).trim();
}

function isEmpty(v: unknown): boolean {
  return v !== null && typeof v === 'object' && Object.keys(v).length === 0;
}

/** What the sample writes for a field: its default, else its first example. */
function sampleValue(f: Field): unknown {
  const { default: dflt, examples } = f.node;
  if (dflt !== undefined && !(isEmpty(dflt) && examples?.length)) return dflt;
  if (examples?.length) return examples[0];
  throw new Error(`${f.key}: the spec gives neither a default nor examples, so the sample has nothing to show (add examples: [...] to the field in spec.ts)`);
}

// ---------------------------------------------------------------------------------------------
// README.md: the settings reference

/** Text in a table cell: a `|` would end the cell, and `<this>` would be read as HTML. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

function defaultCell(f: Field): string {
  if (f.required) return 'required';
  const d = f.node.default;
  if (d === undefined || (isEmpty(d) && (f.node.properties || mapValue(f.node)))) return '—';
  return `\`${inline(d)}\``;
}

function descriptionCell(f: Field): string {
  const text = f.node.description ?? '';
  const eg = f.node.examples?.[0];
  // An example says more than the type for a required text or an optional field without a default.
  const showExample = eg !== undefined && f.node.default === undefined && !enumValues(f.node) && !f.node.properties && !isEmpty(eg);
  return cell(showExample ? `${text}${text ? ' ' : ''}Example: \`${inline(eg)}\`.` : text);
}

function table(rows: Field[]): string {
  const lines = ['| key | type | default | description |', '|---|---|---|---|'];
  for (const f of rows) lines.push(`| \`${f.key}\` | ${typeName(f.node)} | ${defaultCell(f)} | ${descriptionCell(f)} |`);
  return lines.join('\n');
}

export function renderReference(t: SinkType): string {
  return [
    BEGIN,
    '',
    `## Sink settings (\`sinks.<name>\` in weir.yaml, with \`type: ${t.type}\`)`,
    '',
    table(configFields(t)),
    '',
    '`batch`, `retry` and `max_in_flight` are the same for every sink: the core does the batching,',
    'retrying and dead-lettering (src/config/common-spec.ts).',
    '',
    "## Action settings (an entry of a rule's `actions:`)",
    '',
    table([{ key: 'sink', node: actionSinkKeySpec(t.type) as Node, required: true, depth: 0 }, ...actionFields(t)]),
    '',
    END,
  ].join('\n');
}

/** README.md with its reference replaced; a sink without a README gets one with a title only. */
export function renderReadme(t: SinkType, current: string | undefined): string {
  const reference = renderReference(t);
  if (current === undefined) return `# ${t.type} sink\n\n${reference}\n`;
  const begin = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (begin < 0 || end < begin)
    throw new Error(`src/sinks/${t.type}/README.md has no settings reference markers: put the lines\n${BEGIN}\n${END}\nwhere the reference goes`);
  return current.slice(0, begin) + reference + current.slice(end + END.length);
}

// ---------------------------------------------------------------------------------------------
// sample.yaml

const WIDTH = 100;

/** `text` as comment lines of at most WIDTH characters at `indent`. */
function comment(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + 2 + line.length + 1 + word.length > WIDTH) {
      lines.push(`${indent}# ${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(`${indent}# ${line}`);
  return lines;
}

function fieldComment(f: Field): string {
  const options = enumValues(f.node);
  const notes = [options ? `One of: ${options.map(String).join(', ')}.` : '', f.required ? 'Required.' : ''];
  return [f.node.description ?? '', ...notes].filter(Boolean).join(' ');
}

export interface SampleOptions {
  /** Optional fields without a default are written commented out (the file), or set (to check their examples). */
  readonly optional: 'commented' | 'set';
}

/**
 * The lines of one object's fields at `indent` (nested ones under their parent). A field that is
 * commented out is written as it would be and then commented line by line at its own indent, so
 * deleting one `# ` per line turns it on.
 */
function block(all: Field[], depth: number, prefix: string, indent: string, o: SampleOptions): string[] {
  const out: string[] = [];
  for (const f of all.filter((x) => x.depth === depth && x.key.startsWith(prefix) && !x.key.slice(prefix.length).includes('.'))) {
    out.push(...comment(fieldComment(f), indent));
    const name = f.key.slice(prefix.length);
    const off = o.optional === 'commented' && !f.required && f.node.default === undefined;
    const lines: string[] = [];
    const value = f.node.properties ? undefined : sampleValue(f);
    if (f.node.properties) {
      // Inside a block that is commented out as a whole, every field is shown set.
      lines.push(`${indent}${name}:`, ...block(all, depth + 1, `${f.key}.`, `${indent}  `, off ? { optional: 'set' } : o));
    } else if (value === null || typeof value !== 'object' || (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object'))) {
      lines.push(`${indent}${name}: ${inline(value)}`);
    } else {
      lines.push(
        `${indent}${name}:`,
        ...stringify(value, { lineWidth: 0 })
          .trimEnd()
          .split('\n')
          .map((l) => `${indent}  ${l}`),
      );
    }
    out.push(...(off ? lines.map((l) => `${indent}# ${l.slice(indent.length)}`) : lines));
  }
  return out;
}

/** The weir.yaml part of a sample: one sink of type `t` with every field. */
export function renderSampleSink(t: SinkType, o: SampleOptions = { optional: 'commented' }): string {
  return ['sinks:', `  ${t.type}_telemetry:`, `    type: ${t.type}`, ...block(configFields(t), 0, '', '    ', o)].join('\n');
}

/** The rule-file part of a sample: an action writing to that sink. */
export function renderSampleAction(t: SinkType, o: SampleOptions = { optional: 'commented' }): string {
  return ['actions:', `  - sink: ${t.type}_telemetry`, ...block(actionFields(t), 0, '', '    ', o)].join('\n');
}

export function renderSample(t: SinkType): string {
  return [
    `# Every setting of the ${t.type} sink, with its default or an example, and what it does. Generated`,
    '# from spec.ts by `npm run sink-docs`: edit the spec, not this file. Settings that have no default',
    '# and are not required are commented out.',
    '',
    '# In weir.yaml:',
    renderSampleSink(t),
    '',
    "# In a rule file (rules/*.yaml), one of the rule's actions:",
    renderSampleAction(t),
    '',
  ].join('\n');
}

/** Every file the generator writes, with the text it writes. */
export function sinkDocs(types: readonly SinkType[] = ALL_SINK_TYPES): Array<{ path: string; text: string }> {
  return types.flatMap((t) => {
    const dir = join(SINKS_DIR, t.type);
    const readme = join(dir, 'README.md');
    return [
      { path: join(dir, 'sample.yaml'), text: renderSample(t) },
      { path: readme, text: renderReadme(t, existsSync(readme) ? readFileSync(readme, 'utf8') : undefined) },
    ];
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { path, text } of sinkDocs()) {
    const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (before === text) continue;
    writeFileSync(path, text);
    process.stdout.write(`wrote ${path.slice(SINKS_DIR.length - 'src/sinks'.length)}\n`);
  }
}
