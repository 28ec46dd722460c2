// A YAML file read with its positions kept, so that every error can name file:line:col and the
// key. Environment interpolation happens here, on string scalars after parsing: a value can never
// change the document's structure, and the line of each value stays known.
import { isMap, isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { ConfigError } from '../errors.js';

export interface YamlSource {
  readonly file: string;
  readonly text: string;
  readonly doc: Document.Parsed;
  readonly lines: LineCounter;
  readonly errors: ConfigError[];
}

export function parseYaml(file: string, text: string): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const errors = [...doc.errors, ...doc.warnings].map((e) => {
    const pos = lines.linePos(e.pos[0]);
    const lineText = pos ? (text.split('\n')[pos.line - 1] ?? '') : '';
    return new ConfigError('config.yaml_syntax', (e.message.split('\n')[0] ?? e.message) + flowHint(lineText), { file, line: pos?.line, col: pos?.col });
  });
  return { file, text, doc, lines, errors };
}

/** The usual cause of a syntax error on a line like `columns: { temp: ${temp} }`, and its fix. */
function flowHint(line: string): string {
  return /\{[^'"]*:\s*\$\{/.test(line) ? ` (in flow style { … } quote templates and environment references: '\${…}')` : '';
}

/** Where the key of the last element of `path` is written (for unknown keys). */
export function locateKey(src: YamlSource, path: ReadonlyArray<string | number>): { line: number; col: number } {
  const parent = path.length > 1 ? src.doc.getIn(path.slice(0, -1), true) : src.doc.contents;
  if (isMap(parent)) {
    const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(path.at(-1)));
    const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
    if (range) return src.lines.linePos(range[0]);
  }
  return locate(src, path);
}

/** Where the value at `path` starts (or its nearest existing parent). */
export function locate(src: YamlSource, path: ReadonlyArray<string | number>): { line: number; col: number } {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? src.doc.contents : src.doc.getIn(path.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range) return src.lines.linePos(range[0]);
  }
  return { line: 1, col: 1 };
}

const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string scalar with the environment's value;
 * `$${` stands for a literal `${`. An unset variable without a default is an error at its line.
 */
export function interpolateEnv(src: YamlSource, env: NodeJS.ProcessEnv): void {
  visit(src.doc, {
    Scalar(_key, node) {
      if (!isScalar(node) || typeof node.value !== 'string' || !node.value.includes('${')) return;
      const text = node.value;
      node.value = text.replace(ENV_REF, (whole, name: string | undefined, hasDefault: string | undefined, def: string | undefined) => {
        if (whole === '$${') return '${';
        const value = env[name!];
        if (value !== undefined && value !== '') return value;
        if (hasDefault !== undefined) return def ?? '';
        const pos = node.range ? src.lines.linePos(node.range[0]) : undefined;
        src.errors.push(
          new ConfigError('config.env_unset', `environment variable ${name} is not set (write \${${name}:-default} to give a default)`, {
            file: src.file,
            line: pos?.line,
            col: pos?.col,
          }),
        );
        return '';
      });
    },
  });
}
