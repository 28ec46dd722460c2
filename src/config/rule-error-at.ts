// Where in a rule file a compile error of its `sql:` or `jsonata:` is: the one translation of an
// engine position (relative to the rule text) into a file position, for every command.
import { ConfigError, errorText } from '../errors.js';
import { RuleError } from '../rules/index.js';
import { locate, type YamlSource } from './yaml-source.js';

/**
 * A rule's compile error at its place in the rule file. A RuleError's line/col are relative to
 * the SQL (or JSONata) text; this translates them to the file's, so that `weir check`, `weir run`
 * and `weir test` name one position for one mistake.
 */
export function ruleErrorAt(src: YamlSource, key: string, err: unknown): ConfigError {
  const at = locate(src, [key]);
  if (!(err instanceof RuleError)) return new ConfigError('rule.invalid', errorText(err), { file: src.file, ...at, path: key });
  const node = src.doc.get(key, true) as { type?: string; range?: [number, number, number] } | undefined;
  const block = node?.type === 'BLOCK_LITERAL' || node?.type === 'BLOCK_FOLDED';
  let line: number;
  let col: number;
  if (err.line === 0) {
    ({ line, col } = at);
  } else if (block) {
    line = at.line + err.line;
    // The block's indentation is that of its first non-empty line (YAML 1.2 §8.1.1.1).
    const text = src.text.split('\n');
    const first = text.slice(at.line).find((l) => l.trim() !== '') ?? '';
    col = (/^ */.exec(first)?.[0].length ?? 0) + err.col;
  } else if (err.line === 1 && node?.range) {
    // On the scalar's first line the file holds the text char for char, but for its quote and
    // escapes: walk the raw source to the error's character.
    ({ line, col } = src.lines.linePos(rawOffset(src.text, node.range[0], node.type, err.col - 1)));
  } else {
    // A flow scalar folded over several lines: its lines, not its columns, match the file's.
    line = at.line + err.line - 1;
    col = err.col;
  }
  // The file position replaces the SQL-relative one; the caret lines stay.
  const nl = err.message.indexOf('\n');
  return new ConfigError(err.code, `${err.reason}${nl >= 0 ? err.message.slice(nl) : ''}`, { file: src.file, line, col, path: key });
}

/** The file offset of the `chars`-th character of the flow scalar written at `start`. */
function rawOffset(text: string, start: number, type: string | undefined, chars: number): number {
  let i = start + (type === 'QUOTE_DOUBLE' || type === 'QUOTE_SINGLE' ? 1 : 0);
  for (let n = 0; n < chars && i < text.length; n++) {
    if (type === 'QUOTE_SINGLE' && text[i] === "'" && text[i + 1] === "'") i += 2;
    else if (type === 'QUOTE_DOUBLE' && text[i] === '\\') i += 2 + ({ x: 2, u: 4, U: 8 }[text[i + 1] as 'x' | 'u' | 'U'] ?? 0);
    else i += 1;
  }
  return i;
}
