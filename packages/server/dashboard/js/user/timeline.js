/**
 * The events timeline of one stream (GET .../streams/:stream_id/events), by when things happened (the
 * events' valid time; history imported in one go is spread over its real dates), or in the order the
 * node stored them; each event shows when it happened first and when it was stored second. The streams
 * come from GET /v1/users/:user_id/streams. An event named in the URL (from a unit's provenance) is
 * highlighted and scrolled into view.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, userPath, seg } from '../api.js';
import { Badge, ErrorNote, Loading, Short, Time, useAsync } from '../components.js';
import { html } from '../html.js';

const PAGE = 200;

export function TimelinePanel({ userId, streamId, eventId, selectStream }) {
  const streams = useAsync(() => api('GET', userPath(userId, '/streams'), { query: { limit: 1000 } }), [userId]);
  const list = streams.data ? streams.data.streams : [];
  const current = streamId ?? (list.length ? list[list.length - 1].stream_id : null);
  return html`
    <${ErrorNote} error=${streams.error} />
    ${streams.loading && !streams.data ? html`<${Loading} />` : null}
    ${streams.data && list.length === 0 ? html`<p class="muted">This user has no events.</p>` : null}
    ${list.length ? html`<div class="field inline">
      <label for="timeline-stream">Stream</label>
      <select id="timeline-stream" value=${current} onChange=${(e) => selectStream(e.currentTarget.value)}>
        ${list.map((s) => html`<option value=${s.stream_id}>${s.stream_id.slice(0, 8)} · ${s.first_event_at.slice(0, 10)} to ${s.last_event_at.slice(0, 10)}</option>`)}
        ${current && !list.some((s) => s.stream_id === current) ? html`<option value=${current}>${current.slice(0, 8)}</option>` : null}
      </select>
    </div>` : null}
    ${current ? html`<${Events} key=${current} userId=${userId} streamId=${current} eventId=${eventId} />` : null}`;
}

/** Events by valid time, then by storage order (a stable sort keeps the node's order among equals). */
export function byValidTime(events) {
  return events.map((e, i) => [e, i]).sort(([a, i], [b, j]) => a.valid_time.localeCompare(b.valid_time) || i - j).map(([e]) => e);
}

function Events({ userId, streamId, eventId }) {
  const [order, setOrder] = useState('happened');
  const [more, setMore] = useState([]);
  const [moreError, setMoreError] = useState(null);
  const path = userPath(userId, `/streams/${seg(streamId)}/events`);
  const first = useAsync(() => api('GET', path, { query: { limit: PAGE } }), [path]);
  const pages = first.data ? [first.data, ...more] : [];
  const stored = pages.flatMap((p) => p.events);
  const events = order === 'happened' ? byValidTime(stored) : stored;
  const next = pages.length ? pages[pages.length - 1].next_cursor : null;
  const loadMore = async () => {
    try {
      const page = await api('GET', path, { query: { limit: PAGE, after: next } });
      setMore((m) => [...m, page]);
    } catch (err) {
      setMoreError(err);
    }
  };
  useEffect(() => {
    if (eventId) document.getElementById(`event-${eventId}`)?.scrollIntoView({ block: 'center' });
  }, [eventId, events.length]);
  return html`
    <${ErrorNote} error=${first.error ?? moreError} />
    ${first.loading && !first.data ? html`<${Loading} />` : null}
    <div class="field inline"><label for="timeline-order">Order by</label>
      <select id="timeline-order" value=${order} onChange=${(e) => setOrder(e.currentTarget.value)}>
        <option value="happened">when it happened</option><option value="stored">when it was stored</option>
      </select></div>
    <p class="muted small">Stream <code>${streamId}</code>: ${events.length}${next ? '+' : ''} events, ${order === 'happened' ? 'earliest happening first' : 'in the order they were stored'}${next && order === 'happened' ? ' (of those loaded)' : ''}.</p>
    <ol class="timeline">${events.map((e) => html`<li id=${`event-${e.event_id}`} class=${e.event_id === eventId ? 'event highlighted' : 'event'}
        aria-current=${e.event_id === eventId ? 'true' : undefined}>
      <p class="meta"><span class="happened">happened <${Time} iso=${e.valid_time} /></span>
        <span class="muted small">stored <${Time} iso=${e.transaction_time} /></span>
        ${e.role ? html`<${Badge} kind="muted">${e.role}</${Badge}>` : null}
        ${e.content_type !== 'text' ? html`<${Badge}>${e.content_type}</${Badge}>` : null}
        ${e.level === 3 ? html`<${Badge} kind="info">goal</${Badge}>` : null}
        ${e.parent_id ? html`<${Badge} kind="info">task of <${Short} id=${e.parent_id} /></${Badge}>` : null}
        ${e.task_status ? html`<${Badge}>${e.task_status}</${Badge}>` : null}
        ${e.agent_id ? html`<span class="muted">agent ${e.agent_id}</span>` : null}
        ${e.org_id ? html`<span class="muted">org ${e.org_id}</span>` : null}
      </p>
      <p class="content">${e.content}</p>
    </li>`)}</ol>
    ${next ? html`<button type="button" onClick=${loadMore}>Load more events</button>` : null}`;
}
