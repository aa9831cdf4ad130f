/**
 * Search a user's memory with the retrieval options of docs/api.md §3 (limit, as_of, valid-time range,
 * graph depth, org, pending events, arbitration); each result with its score, content, and why it
 * ranked there (`explain`: the fused lists it came from, with its rank in each, and the boosts).
 */
import { api, userPath, NO_STREAM } from '../api.js';
import { Badge, ErrorNote, Time, fromLocalInput } from '../components.js';
import { html } from '../html.js';

export const emptySearch = () => ({
  form: { query: '', limit: '10', graph_depth: '1', as_of: '', start_time: '', end_time: '', org_id: '', include_pending: true, enable_arbitration: false },
  answer: null, error: null, busy: false,
});

export function SearchPanel({ userId, state, setState, openUnit, selectedUnit }) {
  const { form, answer, error, busy } = state;
  const set = (name) => (e) => {
    const value = e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value;
    setState((s) => ({ ...s, form: { ...s.form, [name]: value } }));
  };
  const submit = async (e) => {
    e.preventDefault();
    setState((s) => ({ ...s, busy: true, error: null }));
    const body = {
      query: form.query, limit: Number(form.limit), graph_depth: Number(form.graph_depth),
      as_of: fromLocalInput(form.as_of), start_time: fromLocalInput(form.start_time), end_time: fromLocalInput(form.end_time),
      org_id: form.org_id.trim() || null, include_pending: form.include_pending, enable_arbitration: form.enable_arbitration,
      explain: true,
    };
    try {
      const result = await api('POST', userPath(userId, `/streams/${NO_STREAM}/retrieve`), { body });
      setState((s) => ({ ...s, busy: false, answer: result }));
    } catch (err) {
      setState((s) => ({ ...s, busy: false, error: err }));
    }
  };
  return html`
    <form class="search-form" onSubmit=${submit}>
      <div class="field wide">
        <label for="search-query">Query</label>
        <input id="search-query" name="query" type="search" required value=${form.query} onInput=${set('query')} placeholder="What does the agent remember about…" />
      </div>
      <details class="options">
        <summary>Retrieval options</summary>
        <div class="fields">
          <div class="field"><label for="search-limit">Limit</label>
            <input id="search-limit" type="number" min="1" max="100" value=${form.limit} onInput=${set('limit')} /></div>
          <div class="field"><label for="search-depth">Graph depth</label>
            <select id="search-depth" value=${form.graph_depth} onChange=${set('graph_depth')}>${[0, 1, 2, 3].map((d) => html`<option value=${d}>${d}</option>`)}</select></div>
          <div class="field"><label for="search-start">Happened from</label>
            <input id="search-start" type="datetime-local" step="1" value=${form.start_time} onInput=${set('start_time')} aria-describedby="search-when-hint" /></div>
          <div class="field"><label for="search-end">Happened until</label>
            <input id="search-end" type="datetime-local" step="1" value=${form.end_time} onInput=${set('end_time')} aria-describedby="search-when-hint" />
            <small id="search-when-hint" class="muted">when it happened (valid time; your local time)</small></div>
          <div class="field"><label for="search-asof">Memory as stored by</label>
            <input id="search-asof" type="datetime-local" step="1" value=${form.as_of} onInput=${set('as_of')} aria-describedby="search-asof-hint" />
            <small id="search-asof-hint" class="muted">what the memory held then (storage time): history imported later is hidden</small></div>
          <div class="field"><label for="search-org">Organization knowledge of</label>
            <input id="search-org" value=${form.org_id} onInput=${set('org_id')} placeholder="org id (optional)" autocomplete="off" /></div>
          <div class="field check"><input id="search-pending" type="checkbox" checked=${form.include_pending} onChange=${set('include_pending')} />
            <label for="search-pending">Include events not yet consolidated</label></div>
          <div class="field check"><input id="search-arb" type="checkbox" checked=${form.enable_arbitration} onChange=${set('enable_arbitration')} />
            <label for="search-arb">Keep only the current version of a fact (arbitration)</label></div>
        </div>
      </details>
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Searching…' : 'Search'}</button>
    </form>
    <${ErrorNote} error=${error} />
    ${answer ? html`<${Results} answer=${answer} openUnit=${openUnit} selectedUnit=${selectedUnit} />` : null}`;
}

function Results({ answer, openUnit, selectedUnit }) {
  return html`<section aria-labelledby="results-h" class="results">
    <h2 id="results-h">${answer.results.length} result${answer.results.length === 1 ? '' : 's'}
      <small class="muted"> for “${answer.query}” in ${answer.query_time_ms.toFixed(1)} ms</small></h2>
    ${answer.results.length === 0 ? html`<p class="muted">Nothing matched. Try other words, a larger limit or no time bounds.</p>` : null}
    <ol class="result-list">${answer.results.map((r) => html`
      <li class=${r.unit.id === selectedUnit ? 'result selected' : 'result'}>
        <div class="score" title=${`score ${r.score}`}>
          <meter min="0" max="1" value=${r.score} aria-label="score"></meter><span>${r.score.toFixed(3)}</span>
        </div>
        <div class="result-body">
          <p class="content">${r.unit.content}</p>
          <p class="meta">
            ${r.unit.level === 0 ? html`<${Badge} kind="warn">pending event</${Badge}>` : html`<${Badge}>L${r.unit.level}</${Badge}>`}
            <${Badge} kind="muted">${r.unit.memory_type}</${Badge}>
            <span>happened <${Time} iso=${r.unit.valid_time} /></span>
            ${r.why ? html`<${Why} why=${r.why} />` : null}
            ${r.unit.level > 0 ? html`<button type="button" class="link" onClick=${() => openUnit(r.unit.id)}
              aria-label=${`Details of: ${r.unit.content.slice(0, 60)}`}>Details</button>` : null}
          </p>
        </div>
      </li>`)}
    </ol>
  </section>`;
}

/** The lists a result came from (its rank in each, best first) and the boosts applied. */
const LIST_NAMES = { vector: 'meaning', text: 'words', own: 'own words', context: 'preceding turns', facet: 'kind of fact', graph: 'graph', image: 'image' };
function Why({ why }) {
  const lists = Object.entries(why.lists).sort((a, b) => a[1] - b[1]);
  const parts = lists.map(([name, rank]) => `${LIST_NAMES[name] ?? name} #${rank}`);
  if (why.graph) parts.push(`linked ${why.graph.hops} hop${why.graph.hops === 1 ? '' : 's'} from a match`);
  for (const b of why.boosts) parts.push(`boost: ${b}`);
  return html`<span class="why" title=${`fused ${why.fused}, recency ${why.recency}, importance ${why.importance}`}>why: ${parts.join(' · ')}</span>`;
}
