// Small pieces every view uses: a figure with its label, a state badge, the problem banner, and the
// note that says why payloads or writes are not offered to this client.
import type { ComponentChildren } from 'preact';
import type { Access } from '../../src/core/app/console/api.js';

export function Stat(props: { label: string; value: string; id?: string; tone?: 'ok' | 'bad' | undefined; sub?: string | undefined }) {
  return (
    <div class={`stat${props.tone ? ` ${props.tone}` : ''}`} data-stat={props.id}>
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.sub ? <div class="stat-sub">{props.sub}</div> : null}
    </div>
  );
}

export function Badge(props: { tone: 'ok' | 'bad' | 'warn' | 'idle'; children: ComponentChildren }) {
  return <span class={`badge ${props.tone}`}>{props.children}</span>;
}

export function Problem(props: { error: string | undefined }) {
  return props.error ? (
    <p class="problem" role="alert">
      {props.error}
    </p>
  ) : null;
}

export function Loading(props: { what: string }) {
  return <p class="muted">Loading {props.what}…</p>;
}

/** Why this client does not get payloads or writes, in weir's words. */
export function AccessNote(props: { access: Access | undefined; need: 'payloads' | 'writes'; what: string }) {
  const a = props.access;
  if (!a || a[props.need]) return null;
  return (
    <p class="note" data-access={props.need}>
      {props.what} not offered to this client: {a.reason}
    </p>
  );
}

export function Section(props: { title: string; children: ComponentChildren; right?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.right}
      </header>
      {props.children}
    </section>
  );
}
