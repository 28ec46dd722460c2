// What this client may do (Access in the API): payloads (dead letters, traces, Try it) and writes
// (replay, purge). weir says it in /api/overview; the page asks once and keeps the latest answer, so
// the views that need it do not poll the overview themselves.
import { useEffect, useState } from 'preact/hooks';
import type { Access, Overview } from '../../src/core/app/console/api.js';
import { getJson } from './api.js';

let known: Access | undefined;
let asking = false;
const listeners = new Set<(a: Access) => void>();

/** Records the access an answer of /api/overview carried. */
export function noteAccess(access: Access): void {
  known = access;
  for (const l of listeners) l(access);
}

/** The client's access, undefined until weir has said it. */
export function useAccess(): Access | undefined {
  const [access, setAccess] = useState(known);
  useEffect(() => {
    listeners.add(setAccess);
    if (!known && !asking) {
      asking = true;
      getJson<Overview>('overview').then(
        (o) => noteAccess(o.access),
        () => {
          asking = false;
        },
      );
    }
    return () => void listeners.delete(setAccess);
  }, []);
  return access;
}
