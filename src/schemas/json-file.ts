// A schema file in JSON (.avsc, JSON Schema): parsed with the line of a syntax error, which
// JSON.parse gives only as a character position in most Node versions.
import { readFileSync } from 'node:fs';
import { SchemaLoadError } from './schema-load-error.js';

export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SchemaLoadError(err instanceof Error ? err.message.replace(/^ENOENT: /, '') : String(err), file);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const line = /line (\d+)/.exec(message)?.[1];
    const position = /position (\d+)/.exec(message)?.[1];
    const at = line !== undefined ? Number(line) : position !== undefined ? text.slice(0, Number(position)).split('\n').length : undefined;
    throw new SchemaLoadError(`not JSON: ${message}`, file, at);
  }
}
