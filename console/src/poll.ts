// Polling that stops while nobody looks: a hidden tab (document.visibilityState) makes no request,
// so a console left open in a background tab costs weir nothing; showing it again fetches at once.
// The next request is scheduled when the last one has answered, so a slow weir is never asked twice
// at the same time.
import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson, messageOf } from './api.js';

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  /** When the last answer came (epoch ms). */
  readonly at: number | undefined;
  /** Fetches now (after a change the page made). */
  readonly refresh: () => void;
}

/** GET `api/<path>` now and every `everyMs` while the tab is visible; `path` null: nothing. */
export function usePoll<T>(path: string | null, everyMs: number): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: string; at?: number }>({});
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    setState({});
    if (path === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running: AbortController | undefined;
    let stopped = false;
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(tick, everyMs);
    };
    const tick = async () => {
      if (stopped || document.visibilityState !== 'visible') return;
      clearTimeout(timer);
      running?.abort();
      const ctl = (running = new AbortController());
      try {
        const data = await getJson<T>(path, ctl.signal);
        if (!ctl.signal.aborted) setState({ data, at: Date.now() });
      } catch (err) {
        if (!ctl.signal.aborted) setState((s) => ({ ...s, error: messageOf(err) }));
      }
      if (!ctl.signal.aborted) schedule();
    };
    const visibility = () => {
      if (document.visibilityState === 'visible') void tick();
      else {
        clearTimeout(timer);
        running?.abort();
      }
    };
    kick.current = () => void tick();
    document.addEventListener('visibilitychange', visibility);
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      running?.abort();
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [path, everyMs]);
  return { data: state.data, error: state.error, at: state.at, refresh: () => kick.current() };
}
