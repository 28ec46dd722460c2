// The console's page (docs/console.md): one view per hash route (#/overview, #/rules, …), each
// polling its own endpoint of weir's JSON API while it is shown and the tab is visible.
import './app.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { DeadLettersView } from './views/dead-letters.js';
import { OverviewView } from './views/overview.js';
import { ReconcileView } from './views/reconcile.js';
import { RulesView } from './views/rules.js';
import { SinksView } from './views/sinks.js';
import { TraceView } from './views/trace.js';
import { TryView } from './views/try.js';

const VIEWS = [
  { path: 'overview', title: 'Overview', View: OverviewView },
  { path: 'rules', title: 'Rules', View: RulesView },
  { path: 'sinks', title: 'Sinks', View: SinksView },
  { path: 'reconcile', title: 'Reconcile', View: ReconcileView },
  { path: 'try', title: 'Try it', View: TryView },
  { path: 'trace', title: 'Trace', View: TraceView },
  { path: 'dead-letters', title: 'Dead letters', View: DeadLettersView },
] as const;

function route(): string {
  const path = location.hash.replace(/^#\/?/, '');
  return VIEWS.some((v) => v.path === path) ? path : 'overview';
}

function App() {
  const [path, setPath] = useState(route);
  useEffect(() => {
    const onHash = () => setPath(route());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const current = VIEWS.find((v) => v.path === path) ?? VIEWS[0];
  useEffect(() => {
    document.title = `${current.title} · weir`;
  }, [current]);
  return (
    <>
      <header class="top">
        <a class="brand" href="#/overview">
          weir
        </a>
        <nav>
          {VIEWS.map((v) => (
            <a key={v.path} href={`#/${v.path}`} class={v.path === path ? 'active' : undefined} aria-current={v.path === path ? 'page' : undefined}>
              {v.title}
            </a>
          ))}
        </nav>
      </header>
      <main>
        <h1>{current.title}</h1>
        <current.View key={current.path} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
