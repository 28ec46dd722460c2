// Polling that stops while nobody looks: a hidden tab (document.visibilityState) makes no request,
// so a console left open in a background tab costs weir nothing; showing it again fetches at once.
// The next request is scheduled when the last one has answered, so a slow weir is never asked twice
// at the same time; a refresh asked for meanwhile runs when the answer is in.
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
  const every = useRef(everyMs);
  const control = useRef<{ now: () => void; reschedule: () => void }>({ now: () => {}, reschedule: () => {} });

  useEffect(() => {
    setState({});
    if (path === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running: AbortController | undefined;
    let again = false;
    let stopped = false;
    const visible = () => !stopped && document.visibilityState === 'visible';
    const schedule = () => {
      clearTimeout(timer);
      if (visible() && !running) timer = setTimeout(tick, every.current);
    };
    const tick = async () => {
      clearTimeout(timer);
      if (!visible()) return;
      if (running) {
        again = true;
        return;
      }
      const ctl = (running = new AbortController());
      try {
        const data = await getJson<T>(path, ctl.signal);
        if (!ctl.signal.aborted) setState({ data, at: Date.now() });
      } catch (err) {
        if (!ctl.signal.aborted) setState((s) => ({ ...s, error: messageOf(err) }));
      }
      if (ctl.signal.aborted) return;
      running = undefined;
      if (again) {
        again = false;
        void tick();
      } else schedule();
    };
    const visibility = () => {
      if (visible()) void tick();
      else {
        clearTimeout(timer);
        running?.abort();
        running = undefined;
      }
    };
    control.current = { now: () => void tick(), reschedule: schedule };
    document.addEventListener('visibilitychange', visibility);
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      running?.abort();
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [path]);

  // A new interval takes effect at once, without dropping the data or the request under way.
  useEffect(() => {
    every.current = everyMs;
    control.current.reschedule();
  }, [everyMs]);

  return { data: state.data, error: state.error, at: state.at, refresh: () => control.current.now() };
}
