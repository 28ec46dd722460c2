// The dead letters `weir dlq` works on: where `weir run` writes them (core/app/dead-letter-place.ts),
// or with --fallback the fallback file, where letters go that their store refused even reduced.
import { existsSync } from 'node:fs';
import type { WeirConfig } from '../../config/types.js';
import { besideConfig, deadLetterPlace } from './dead-letter-place.js';
import { WeirError } from '../../errors.js';
import { silentLogger } from '../../log.js';
import { FileLetterStore } from '../../dead-letters/file-store.js';
import type { LetterStore } from '../../dead-letters/letter-store.js';

export function openLetterStore(cfg: WeirConfig, which: 'store' | 'fallback'): LetterStore {
  if (which === 'fallback') return new FileLetterStore(besideConfig(cfg, cfg.deadLetter.fallback_file));
  const place = deadLetterPlace(cfg);
  if ('sink' in place) {
    // The loader refused a dead_letter.sink that keeps no letters; this guards a config it never saw.
    const { sink } = place;
    if (!sink.sinkType.letterStore || !sink.sinkType.keepsLetters?.(sink.settings))
      throw new WeirError('dlq.no_store', `dead_letter.sink ${sink.name} is a ${sink.sinkType.type} sink that keeps no dead letters with its settings`);
    return sink.sinkType.letterStore(sink.settings, { name: sink.name, log: silentLogger });
  }
  // The default file exists once weir has dead-lettered something; before, there is no store.
  if (!place.configured && !existsSync(place.file)) {
    throw new WeirError('dlq.no_store', `no dead-letter store in ${cfg.file} (dead_letter.sink, dead_letter.file or a postgres sink), and no ${place.file}`);
  }
  return new FileLetterStore(place.file);
}
