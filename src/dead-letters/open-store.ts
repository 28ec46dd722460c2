// The dead letters `weir dlq` works on: where `weir run` writes them (core/dead-letter-place.ts),
// or with --fallback the fallback file, where letters go that their store refused even reduced.
import { existsSync } from 'node:fs';
import type { SinkConfig, WeirConfig } from '../config/load.js';
import { besideConfig, deadLetterPlace } from '../core/dead-letter-place.js';
import { WeirError } from '../errors.js';
import { silentLogger } from '../log.js';
import { FileLetterStore } from './file-store.js';
import type { LetterStore } from './letter-store.js';

export function openLetterStore(cfg: WeirConfig, which: 'store' | 'fallback'): LetterStore {
  if (which === 'fallback') return new FileLetterStore(besideConfig(cfg, cfg.deadLetter.fallback_file));
  // A sink keeps letters when its type offers a store for its settings; each is asked once.
  const stores = new Map<string, LetterStore | undefined>();
  const storeOf = (s: SinkConfig) => {
    if (!stores.has(s.name)) stores.set(s.name, s.type.letterStore?.(s.settings, { name: s.name, log: silentLogger }));
    return stores.get(s.name);
  };
  const place = deadLetterPlace(cfg, (s) => storeOf(s) !== undefined);
  if ('sink' in place) {
    const store = storeOf(place.sink);
    if (!store) throw new WeirError('dlq.no_store', `dead_letter.sink ${place.sink.name} is a ${place.sink.type.type} sink, which keeps no dead letters weir dlq can read with its settings`);
    return store;
  }
  // The default file exists once weir has dead-lettered something; before, there is no store.
  if (!place.configured && !existsSync(place.file)) {
    throw new WeirError('dlq.no_store', `no dead-letter store in ${cfg.file} (dead_letter.sink, dead_letter.file or a postgres sink), and no ${place.file}`);
  }
  return new FileLetterStore(place.file);
}
