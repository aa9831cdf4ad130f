/** Small shared pieces: loading state of a call, error notes, times, tabs, badges. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

/**
 * The state of an async load that reruns when `deps` change or `reload()` is called; the previous data
 * stays shown while a reload runs, and an answer that arrives after a newer load started is dropped.
 */
export function useAsync(load, deps) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ loading: false, data, error: null }),
      (error) => live && setState((s) => ({ loading: false, data: s.data, error })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** Runs `fn` every `ms` while the page is visible (polling), and once at once. */
export function useInterval(fn, ms) {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    const id = setInterval(() => {
      if (!document.hidden) saved.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
}

export function ErrorNote({ error, title }) {
  if (!error) return null;
  return html`<div class="error" role="alert">
    ${title ? html`<strong>${title}: </strong>` : null}${error.message}
    ${error.details && error.details.length ? html`<ul>${error.details.map((d) => html`<li><code>${d.path}</code> ${d.message}</li>`)}</ul>` : null}
  </div>`;
}

export function Loading({ what = 'Loading' }) {
  return html`<p class="muted" role="status">${what}…</p>`;
}

/** RFC 3339 → "2025-06-01 14:03:09 UTC" (one zone for everyone reading the same screen). */
export function fmtTime(iso, precise = false) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, precise ? 23 : 19).replace('T', ' ')} UTC`;
}

/** A time; `precise` adds milliseconds (versions of a fact are often made within one second). */
export function Time({ iso, precise }) {
  return html`<time datetime=${iso ?? ''} title=${iso ?? ''}>${fmtTime(iso, precise)}</time>`;
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = s / 60;
  return m < 120 ? `${m.toFixed(1)} min` : `${(m / 60).toFixed(1)} h`;
}

/** A `datetime-local` value (the browser's zone) → RFC 3339 UTC, or null when empty. */
export function fromLocalInput(value) {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export function Badge({ kind = '', children }) {
  return html`<span class=${`badge ${kind}`}>${children}</span>`;
}

export const statusKind = (status) => ({ completed: 'ok', in_progress: 'info', blocked: 'warn', failed: 'bad', cancelled: 'muted' })[status] ?? '';

export function Short({ id }) {
  return html`<code class="id" title=${id}>${id ? id.slice(0, 8) : '—'}</code>`;
}

/**
 * Tabs as the ARIA authoring practices describe them: a tablist whose selected tab is the one in the
 * focus order, arrow keys (and Home/End) to move between tabs, one panel labelled by its tab.
 */
export function Tabs({ label, tabs, selected, onSelect, id, children }) {
  const listRef = useRef(null);
  // on a narrow screen the tabs scroll sideways: keep the selected one in view
  useEffect(() => {
    listRef.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [selected]);
  const onKeyDown = (e) => {
    const i = tabs.findIndex((t) => t.id === selected);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    onSelect(next.id);
    requestAnimationFrame(() => listRef.current?.querySelector(`#${id}-tab-${next.id}`)?.focus());
  };
  return html`
    <div class="tabs" role="tablist" aria-label=${label} ref=${listRef} onKeyDown=${onKeyDown}>
      ${tabs.map((t) => html`<button type="button" role="tab" id=${`${id}-tab-${t.id}`} aria-selected=${t.id === selected ? 'true' : 'false'}
        aria-controls=${`${id}-panel`} tabindex=${t.id === selected ? 0 : -1} onClick=${() => onSelect(t.id)}>${t.label}</button>`)}
    </div>
    <section class="tabpanel" role="tabpanel" id=${`${id}-panel`} aria-labelledby=${`${id}-tab-${selected}`}>${children}</section>`;
}

/** A labelled form control: the label is tied to the control by id. */
let fieldIds = 0;
export function Field({ label, hint, children, wide }) {
  const [id] = useState(() => `f${++fieldIds}`);
  const hintId = hint ? `${id}-hint` : undefined;
  const control = typeof children === 'function' ? children({ id, 'aria-describedby': hintId }) : children;
  return html`<div class=${`field${wide ? ' wide' : ''}`}>
    <label for=${id}>${label}</label>
    ${control}
    ${hint ? html`<small id=${hintId} class="muted">${hint}</small>` : null}
  </div>`;
}
