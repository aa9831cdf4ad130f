/** The user's stored units as they are (GET /v1/users/:user_id/memories), paged, retired ones on request. */
import { useState } from 'preact/hooks';
import { api, userPath } from '../api.js';
import { Badge, ErrorNote, Loading, Time, useAsync } from '../components.js';
import { html } from '../html.js';

const PAGE = 100;

export function MemoriesPanel({ userId, openUnit, selectedUnit }) {
  const [retired, setRetired] = useState(false);
  const [level, setLevel] = useState('');
  const [more, setMore] = useState([]);
  const [moreError, setMoreError] = useState(null);
  const first = useAsync(async () => {
    setMore([]);
    return api('GET', userPath(userId, '/memories'), { query: { include_retired: retired, level, limit: PAGE } });
  }, [userId, retired, level]);
  const pages = first.data ? [first.data, ...more] : [];
  const units = pages.flatMap((p) => p.memories);
  const next = pages.length ? pages[pages.length - 1].next_cursor : null;
  const loadMore = async () => {
    try {
      const page = await api('GET', userPath(userId, '/memories'), { query: { include_retired: retired, level, limit: PAGE, after: next } });
      setMore((m) => [...m, page]);
    } catch (err) {
      setMoreError(err);
    }
  };
  return html`
    <div class="toolbar">
      <div class="field check"><input id="mem-retired" type="checkbox" checked=${retired} onChange=${(e) => setRetired(e.currentTarget.checked)} />
        <label for="mem-retired">Show superseded and forgotten units</label></div>
      <div class="field inline"><label for="mem-level">Level</label>
        <select id="mem-level" value=${level} onChange=${(e) => setLevel(e.currentTarget.value)}>
          <option value="">all</option><option value="1">L1 facts</option><option value="2">L2 insights</option>
        </select></div>
    </div>
    <${ErrorNote} error=${first.error ?? moreError} />
    ${first.loading && !first.data ? html`<${Loading} />` : null}
    ${first.data && units.length === 0 ? html`<p class="muted">No memory units yet (consolidation makes them from events shortly after they arrive).</p>` : null}
    <ul class="unit-list">${units.map((u) => html`<li class=${u.id === selectedUnit ? 'selected' : ''}>
      <button type="button" class="unit-row" onClick=${() => openUnit(u.id)} aria-current=${u.id === selectedUnit ? 'true' : undefined}>
        <span class="content">${u.content}</span>
        <span class="meta"><${Badge}>L${u.level}</${Badge}> ${u.retired_at ? html`<${Badge} kind="muted">${u.superseded_by ? 'superseded' : 'forgotten'}</${Badge}>` : null}
          happened <${Time} iso=${u.valid_time} /> <span class="muted">· stored <${Time} iso=${u.transaction_time} /></span></span>
      </button>
    </li>`)}</ul>
    ${next ? html`<button type="button" onClick=${loadMore}>Load more</button>` : null}`;
}
