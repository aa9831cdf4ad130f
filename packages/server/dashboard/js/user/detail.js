/**
 * One unit (GET /v1/users/:user_id/memories/:id): its content and fields, its provenance (the source
 * events it was made from), its versions (the correction chain, each with when it was current: what
 * `as_of` shows) and its edges.
 */
import { useEffect, useRef } from 'preact/hooks';
import { api, userPath, seg } from '../api.js';
import { Badge, ErrorNote, Loading, Short, Time, useAsync } from '../components.js';
import { html } from '../html.js';

export function UnitDetail({ userId, unitId, openUnit, openEvent, onClose }) {
  const { data, error, loading } = useAsync(() => api('GET', userPath(userId, `/memories/${seg(unitId)}`)), [userId, unitId]);
  const heading = useRef(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);
  const onKeyDown = (e) => {
    if (e.key === 'Escape') onClose();
  };
  return html`<aside class="card detail" aria-labelledby="detail-h" onKeyDown=${onKeyDown}>
    <div class="detail-head">
      <h2 id="detail-h" tabindex="-1" ref=${heading}>Memory unit</h2>
      <button type="button" class="ghost" onClick=${onClose} aria-label="Close the unit detail">Close</button>
    </div>
    <${ErrorNote} error=${error} />
    ${loading && !data ? html`<${Loading} />` : null}
    ${data ? html`<${Detail} detail=${data} openUnit=${openUnit} openEvent=${openEvent} />` : null}
  </aside>`;
}

function state(u) {
  if (!u.retired_at) return html`<${Badge} kind="ok">current</${Badge}>`;
  return html`<${Badge} kind="muted">${u.superseded_by ? 'superseded' : 'forgotten'}</${Badge}>`;
}

function Detail({ detail, openUnit, openEvent }) {
  const { unit, versions, edges, neighbours, source_events: events } = detail;
  const byId = new Map(neighbours.map((n) => [n.id, n]));
  const missing = unit.references.filter((r) => !events.some((e) => e.event_id === r));
  return html`
    <blockquote class="unit-content">${unit.content}</blockquote>
    <dl class="facts">
      <dt>Id</dt><dd><code>${unit.id}</code></dd>
      <dt>State</dt><dd>${state(unit)} ${unit.retired_at ? html`since <${Time} iso=${unit.retired_at} />` : null}</dd>
      <dt>Level</dt><dd>L${unit.level} · ${unit.memory_type}</dd>
      <dt>Happened</dt><dd><${Time} iso=${unit.valid_time} /></dd>
      <dt>Stored</dt><dd><${Time} iso=${unit.transaction_time} /></dd>
      <dt>Importance</dt><dd>${unit.importance.toFixed(2)}</dd>
      <dt>Stream</dt><dd><${Short} id=${unit.stream_id} /></dd>
      ${unit.keywords.length ? html`<dt>Keywords</dt><dd>${unit.keywords.join(', ')}</dd>` : null}
    </dl>

    <section aria-labelledby="prov-h">
      <h3 id="prov-h">Provenance: source events</h3>
      ${events.length === 0 && missing.length === 0 ? html`<p class="muted">Made from no event (e.g. by an update instruction).</p>` : null}
      <ul class="events compact">${events.map((e) => html`<li class="event">
        <p class="content">${e.content}</p>
        <p class="meta">${e.role ? html`<${Badge} kind="muted">${e.role}</${Badge}>` : null} <${Time} iso=${e.transaction_time} />
          <button type="button" class="link" onClick=${() => openEvent(e.stream_id, e.event_id)}>Show in timeline</button></p>
      </li>`)}</ul>
      ${missing.length ? html`<p class="muted">${missing.length} source event${missing.length > 1 ? 's are' : ' is'} no longer stored.</p>` : null}
    </section>

    <section aria-labelledby="versions-h">
      <h3 id="versions-h">Versions</h3>
      ${versions.length <= 1 ? html`<p class="muted">No corrections: this is the only version.</p>` : html`
        <p class="muted small">Oldest first. Each version held from when it happened until the next one did; when it was stored comes second (a search <em>as of</em> a storage time shows the version stored by then).</p>
        <ol class="versions">${versions.map((v) => html`<li aria-current=${v.id === unit.id ? 'true' : undefined} class=${v.id === unit.id ? 'this' : ''}>
          <p class="content">${v.id === unit.id ? v.content : html`<button type="button" class="link" onClick=${() => openUnit(v.id)}>${v.content}</button>`}</p>
          <p class="meta">${state(v)}: happened from <${Time} iso=${v.valid_time} precise />${versions[versions.indexOf(v) + 1] ? html` until <${Time} iso=${versions[versions.indexOf(v) + 1].valid_time} precise />` : ' on'}
            <span class="muted small">· stored <${Time} iso=${v.transaction_time} precise />${v.retired_at ? html` to <${Time} iso=${v.retired_at} precise />` : ''}</span>
            ${v.id === unit.id ? html` <${Badge} kind="info">this unit</${Badge}>` : null}</p>
        </li>`)}</ol>`}
    </section>

    <section aria-labelledby="edges-h">
      <h3 id="edges-h">Edges</h3>
      ${edges.length === 0 ? html`<p class="muted">No edges.</p>` : html`<ul class="edges">${edges.map((e) => {
        const out = e.source_id === unit.id;
        const other = byId.get(out ? e.target_id : e.source_id);
        const otherId = out ? e.target_id : e.source_id;
        return html`<li>
          <span class="relation">${out ? `${e.relation} →` : `← ${e.relation}`}</span>
          <button type="button" class="link" onClick=${() => openUnit(otherId)}>${other ? other.content : otherId}</button>
          <small class="muted"> weight ${e.weight}</small>
        </li>`;
      })}</ul>`}
    </section>`;
}
