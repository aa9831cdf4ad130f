/**
 * An organization's knowledge (/dashboard/orgs/<org_id>, docs/api.md §9): the metrics, and the knowledge
 * list with search, sort and paging; an item opens its contributions.
 */
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { Badge, ErrorNote, Loading, Time, useAsync } from '../components.js';
import { html } from '../html.js';
import { Link, userUrl } from '../router.js';

const PAGE = 50;

export function OrgPage({ orgId }) {
  const base = `/v1/organizations/${seg(orgId)}/knowledge`;
  const metrics = useAsync(() => api('GET', `${base}/metrics`), [base]);
  return html`
    <h1 tabindex="-1">Organization <span class="mono">${orgId}</span></h1>
    <${ErrorNote} error=${metrics.error} />
    ${metrics.data ? html`<${Metrics} m=${metrics.data} />` : metrics.loading ? html`<${Loading} />` : null}
    <${Knowledge} key=${base} base=${base} />`;
}

function Distribution({ title, items, name = (k) => k }) {
  const total = items.reduce((n, i) => n + i.value, 0) || 1;
  return html`<div class="distribution"><h3>${title}</h3>
    ${items.length === 0 ? html`<p class="muted">—</p>` : html`<ul>${items.map((i) => html`<li>
      <span class="dist-label">${name(i.key)}</span>
      <meter min="0" max=${total} value=${i.value} aria-label=${`${name(i.key)}: ${i.value}`}></meter>
      <span class="num">${i.value}</span></li>`)}</ul>`}</div>`;
}

function Metrics({ m }) {
  return html`<section class="card" aria-labelledby="metrics-h">
    <h2 id="metrics-h">Metrics</h2>
    <dl class="stats">
      <div class="stat"><dt>Knowledge items</dt><dd>${m.knowledge_count}</dd></div>
      <div class="stat"><dt>Contributions</dt><dd>${m.contribution_count}</dd></div>
      <div class="stat"><dt>Contributors</dt><dd>${m.contributor_count}</dd></div>
      <div class="stat"><dt>Latest published</dt><dd><${Time} iso=${m.latest_published_at} /></dd></div>
    </dl>
    <div class="grid-2">
      <${Distribution} title="By source type" items=${m.source_type_distribution ?? []} />
      <${Distribution} title="By level" items=${m.level_distribution ?? []} name=${(k) => `L${k}`} />
    </div>
  </section>`;
}

function Knowledge({ base }) {
  const [q, setQ] = useState('');
  const [sort, setSort] = useState('published_desc');
  const [applied, setApplied] = useState({ q: '', sort: 'published_desc' });
  const [more, setMore] = useState([]);
  const [moreError, setMoreError] = useState(null);
  const [open, setOpen] = useState(null);
  const first = useAsync(async () => {
    setMore([]);
    return api('GET', base, { query: { q: applied.q, sort: applied.sort, limit: PAGE } });
  }, [base, applied.q, applied.sort]);
  const pages = first.data ? [first.data, ...more] : [];
  const items = pages.flatMap((p) => p.items);
  const next = pages.length ? pages[pages.length - 1].next_cursor : null;
  const loadMore = async () => {
    try {
      const page = await api('GET', base, { query: { q: applied.q, sort: applied.sort, limit: PAGE, cursor: next } });
      setMore((m) => [...m, page]);
    } catch (err) {
      setMoreError(err);
    }
  };
  const submit = (e) => {
    e.preventDefault();
    setApplied({ q, sort });
  };
  return html`<section class="card" aria-labelledby="knowledge-h">
    <h2 id="knowledge-h">Knowledge${first.data ? html` <small class="muted">(${first.data.total_count})</small>` : null}</h2>
    <form class="toolbar" role="search" aria-label="Search the knowledge" onSubmit=${submit}>
      <div class="field inline"><label for="k-q">Contains</label><input id="k-q" type="search" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} /></div>
      <div class="field inline"><label for="k-sort">Sort</label>
        <select id="k-sort" value=${sort} onChange=${(e) => setSort(e.currentTarget.value)}>
          <option value="published_desc">newest first</option><option value="contributions_desc">most contributions</option><option value="topic_asc">topic</option>
        </select></div>
      <button type="submit">Apply</button>
    </form>
    <${ErrorNote} error=${first.error ?? moreError} />
    ${first.loading && !first.data ? html`<${Loading} />` : null}
    ${first.data && items.length === 0 ? html`<p class="muted">No knowledge: memory made from events with this <code>org_id</code> appears here.</p>` : null}
    <ul class="knowledge">${items.map((it) => html`<li>
      <button type="button" class="unit-row" aria-expanded=${open === it.unit.id ? 'true' : 'false'} onClick=${() => setOpen(open === it.unit.id ? null : it.unit.id)}>
        <span class="content">${it.unit.content}</span>
        <span class="meta"><${Badge}>L${it.unit.level}</${Badge}> ${it.contribution_count} contribution${it.contribution_count === 1 ? '' : 's'}
          · ${it.contributor_user_ids.length} contributor${it.contributor_user_ids.length === 1 ? '' : 's'} · published <${Time} iso=${it.published_at} /></span>
      </button>
      ${open === it.unit.id ? html`<${Contributions} base=${base} id=${it.unit.id} />` : null}
    </li>`)}</ul>
    ${next ? html`<button type="button" onClick=${loadMore}>Load more</button>` : null}
  </section>`;
}

function Contributions({ base, id }) {
  const { data, error, loading } = useAsync(() => api('GET', `${base}/${seg(id)}`), [base, id]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (loading && !data) return html`<${Loading} />`;
  return html`<ul class="contributions">${data.knowledge.contributions.map((c) => html`<li>
    <${Link} href=${userUrl(c.contributor_user_id, { unit: c.source_id, tab: 'memories' })}>${c.contributor_user_id}</${Link}>:
    ${c.source_content_preview} <small class="muted">(${c.source_memory_type}, L${c.source_level}, <${Time} iso=${c.activated_at} />)</small>
  </li>`)}</ul>`;
}
