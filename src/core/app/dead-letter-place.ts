// Where dead letters go, decided in one place for `weir run` (which writes them) and `weir dlq`
// (which reads them): weir.yaml's dead_letter.sink or dead_letter.file, else the first sink that
// keeps dead letters itself, else weir-dead-letter.jsonl beside weir.yaml.
import { dirname, resolve } from 'node:path';
import type { SinkConfig, WeirConfig } from '../../config/types.js';

export type DeadLetterPlace =
  | { readonly sink: SinkConfig }
  /** `configured`: named by dead_letter.file, not the default. */
  | { readonly file: string; readonly configured: boolean };

/** The default file when nothing else keeps dead letters. */
export const DEFAULT_DEAD_LETTER_FILE = 'weir-dead-letter.jsonl';

export function deadLetterPlace(cfg: WeirConfig): DeadLetterPlace {
  const dl = cfg.deadLetter;
  if (dl.sink) return { sink: cfg.sinks.get(dl.sink)! };
  if (dl.file) return { file: besideConfig(cfg, dl.file), configured: true };
  // Whether a sink keeps letters is its type's to say from its settings (SinkType.keepsLetters),
  // the same answer for the loader's check, `weir run`, `weir dlq` and `weir check --connect`.
  const capable = [...cfg.sinks.values()].find((s: SinkConfig) => s.sinkType.keepsLetters?.(s.settings) === true);
  if (capable) return { sink: capable };
  return { file: besideConfig(cfg, DEFAULT_DEAD_LETTER_FILE), configured: false };
}

/** A path from weir.yaml, relative to the file's directory (as rules_dir is). */
export function besideConfig(cfg: WeirConfig, path: string): string {
  return resolve(dirname(cfg.file), path);
}
