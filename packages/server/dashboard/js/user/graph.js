/**
 * The graph of a user's units and edges, drawn with Cytoscape (pan with a drag, zoom with the wheel or
 * the buttons, click or Enter on a unit to open it). The same units and edges are listed under the
 * drawing for keyboard and screen reader users. A few hundred edges stay readable: a filter keeps the
 * units that mention a person or thing (and their neighbours), weak edges can be hidden, units left
 * without an edge can be hidden, and relation labels are drawn only on small graphs (on hover otherwise).
 */
import cytoscape from 'cytoscape';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, userPath } from '../api.js';
import { ErrorNote, Loading, useAsync } from '../components.js';
import { html } from '../html.js';

const MAX_UNITS = 2000;
const MAX_EDGES = 10000;

/** Every page of a listing, up to `max` items. */
async function all(path, key, max, query = {}) {
  const items = [];
  let after = null;
  do {
    const page = await api('GET', path, { query: { ...query, limit: 1000, after } });
    items.push(...page[key]);
    after = page.next_cursor;
  } while (after && items.length < max);
  return { items: items.slice(0, max), truncated: after !== null && after !== undefined };
}

const label = (text) => (text.length > 48 ? `${text.slice(0, 46)}…` : text);
/** Past this many edges, relation labels are drawn only for the edges of the hovered or selected unit. */
const LABELLED_EDGES = 60;

/**
 * What is drawn: units mentioning `filter` (case-insensitive; all when empty) and their direct
 * neighbours, edges of at least `minWeight` between drawn units, and, with `connectedOnly`, only units
 * that keep an edge.
 */
export function visibleGraph(data, { filter, minWeight, connectedOnly }) {
  const edges = data.edges.filter((e) => (e.weight ?? 1) >= minWeight);
  let ids = new Set(data.units.map((u) => u.id));
  const needle = filter.trim().toLowerCase();
  if (needle) {
    const matched = new Set(data.units.filter((u) => u.content.toLowerCase().includes(needle)).map((u) => u.id));
    ids = new Set(matched);
    for (const e of edges) {
      if (matched.has(e.source_id)) ids.add(e.target_id);
      if (matched.has(e.target_id)) ids.add(e.source_id);
    }
  }
  let kept = edges.filter((e) => ids.has(e.source_id) && ids.has(e.target_id));
  if (connectedOnly) {
    const linked = new Set(kept.flatMap((e) => [e.source_id, e.target_id]));
    ids = new Set([...ids].filter((id) => linked.has(id)));
    kept = kept.filter((e) => ids.has(e.source_id) && ids.has(e.target_id));
  }
  return { units: data.units.filter((u) => ids.has(u.id)), edges: kept, truncated: data.truncated };
}

export function GraphPanel({ userId, openUnit, selectedUnit }) {
  // corrections are edges to superseded units: shown unless asked otherwise
  const [retired, setRetired] = useState(true);
  const [filter, setFilter] = useState('');
  const [minWeight, setMinWeight] = useState(0);
  const [connectedOnly, setConnectedOnly] = useState(false);
  const { data, error, loading } = useAsync(async () => {
    const [units, edges] = await Promise.all([
      all(userPath(userId, '/memories'), 'memories', MAX_UNITS, { include_retired: retired }),
      all(userPath(userId, '/graph/edges'), 'edges', MAX_EDGES),
    ]);
    const ids = new Set(units.items.map((u) => u.id));
    // an edge is drawn when both its ends are drawn
    return { units: units.items, edges: edges.items.filter((e) => ids.has(e.source_id) && ids.has(e.target_id)), truncated: units.truncated || edges.truncated };
  }, [userId, retired]);
  // the same object while nothing it depends on changes, so selecting a unit does not lay the graph out again
  const shown = useMemo(() => (data ? visibleGraph(data, { filter, minWeight, connectedOnly }) : null), [data, filter, minWeight, connectedOnly]);
  return html`
    <div class="toolbar">
      <div class="field check"><input id="graph-retired" type="checkbox" checked=${retired} onChange=${(e) => setRetired(e.currentTarget.checked)} />
        <label for="graph-retired">Include superseded and forgotten units (grey)</label></div>
      <div class="field inline"><label for="graph-filter">Units mentioning</label>
        <input id="graph-filter" type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} placeholder="a person or thing" autocomplete="off" /></div>
      <div class="field inline"><label for="graph-weight">Hide edges weaker than</label>
        <input id="graph-weight" type="range" min="0" max="1" step="0.05" value=${minWeight} onInput=${(e) => setMinWeight(Number(e.currentTarget.value))} />
        <output for="graph-weight">${minWeight.toFixed(2)}</output></div>
      <div class="field check"><input id="graph-connected" type="checkbox" checked=${connectedOnly} onChange=${(e) => setConnectedOnly(e.currentTarget.checked)} />
        <label for="graph-connected">Only units with an edge</label></div>
    </div>
    <${ErrorNote} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading the graph" />` : null}
    ${shown ? html`<${Graph} data=${shown} total=${data} openUnit=${openUnit} selectedUnit=${selectedUnit} />` : null}`;
}

function Graph({ data, total, openUnit, selectedUnit }) {
  const box = useRef(null);
  const cy = useRef(null);
  const open = useRef(openUnit);
  open.current = openUnit;
  useEffect(() => {
    // Start on a circle in a fixed order, then let CoSE settle it: the same data draws the same picture.
    const n = Math.max(1, data.units.length);
    const r = 40 * Math.sqrt(n);
    const elements = [
      ...data.units.map((u, i) => ({
        data: { id: u.id, label: label(u.content), level: u.level, retired: u.retired_at ? 1 : 0 },
        position: { x: r * Math.cos((2 * Math.PI * i) / n), y: r * Math.sin((2 * Math.PI * i) / n) },
      })),
      ...data.edges.map((e) => ({ data: { id: e.edge_id, source: e.source_id, target: e.target_id, relation: e.relation, weight: e.weight ?? 1 } })),
    ];
    const labelled = data.edges.length <= LABELLED_EDGES;
    const instance = cytoscape({
      container: box.current, elements, minZoom: 0.1, maxZoom: 4,
      layout: {
        // strong repulsion and ideal edge lengths by weight pull clusters apart; separate components keep their distance
        name: 'cose', animate: false, randomize: false, fit: true, padding: 30, nodeDimensionsIncludeLabels: true, componentSpacing: 120,
        nodeRepulsion: () => 40000, idealEdgeLength: (edge) => 60 + 120 * (1 - edge.data('weight')), edgeElasticity: (edge) => 50 + 150 * edge.data('weight'),
        gravity: 0.5, numIter: 1500,
        stop: (e) => {
          // a small graph fitted to the box would be drawn huge: keep it at a readable size
          if (e.cy.zoom() > 1.25) {
            e.cy.zoom(1.25);
            e.cy.center();
          }
          // where the nodes are final (tests wait for it before clicking one)
          e.cy.container()?.setAttribute('data-layout', 'done');
        },
      },
      style: [
        { selector: 'node', style: { label: 'data(label)', 'font-size': 10, 'text-wrap': 'wrap', 'text-max-width': 120, 'background-color': '#2b6cb0', color: '#1a202c', 'text-valign': 'bottom', 'text-margin-y': 4, width: 18, height: 18 } },
        { selector: 'node[level = 2]', style: { 'background-color': '#805ad5', shape: 'diamond', width: 22, height: 22 } },
        { selector: 'node[retired = 1]', style: { 'background-color': '#a0aec0', opacity: 0.7 } },
        { selector: 'node:selected, node.current', style: { 'border-width': 3, 'border-color': '#dd6b20' } },
        { selector: 'edge', style: { width: 'mapData(weight, 0, 1, 0.5, 3)', opacity: 'mapData(weight, 0, 1, 0.35, 1)', 'line-color': '#a0aec0', 'target-arrow-color': '#a0aec0', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: labelled ? 'data(relation)' : '', 'font-size': 8, color: '#4a5568', 'text-rotation': 'autorotate', 'text-background-color': '#fff', 'text-background-opacity': 1, 'text-background-padding': 1 } },
        { selector: 'edge.near', style: { label: 'data(relation)', 'line-color': '#dd6b20', 'target-arrow-color': '#dd6b20', opacity: 1 } },
      ],
    });
    instance.on('tap', 'node', (e) => open.current(e.target.id()));
    // on a large graph, a unit's own edges show their relation while it is hovered
    instance.on('mouseover', 'node', (e) => e.target.connectedEdges().addClass('near'));
    instance.on('mouseout', 'node', (e) => e.target.connectedEdges().removeClass('near'));
    cy.current = instance;
    return () => {
      instance.destroy();
      cy.current = null;
    };
  }, [data]);
  useEffect(() => {
    const instance = cy.current;
    if (!instance) return;
    instance.nodes().removeClass('current');
    instance.edges().removeClass('near');
    if (selectedUnit) instance.getElementById(selectedUnit).addClass('current').connectedEdges().addClass('near');
  }, [selectedUnit, data]);
  const zoom = (factor) => {
    const instance = cy.current;
    if (!instance) return;
    instance.zoom({ level: instance.zoom() * factor, renderedPosition: { x: instance.width() / 2, y: instance.height() / 2 } });
  };
  const contentOf = new Map(data.units.map((u) => [u.id, u.content]));
  return html`
    <p class="muted small graph-summary">${data.units.length} units, ${data.edges.length} edges${data.units.length !== total.units.length || data.edges.length !== total.edges.length ? ` shown of ${total.units.length} and ${total.edges.length}` : ''}${data.truncated ? ' (the first ones only)' : ''}. Drag to pan, scroll to zoom, click a unit to open it.</p>
    <div class="graph-controls" role="group" aria-label="Graph view">
      <button type="button" onClick=${() => zoom(1.25)}>Zoom in</button>
      <button type="button" onClick=${() => zoom(0.8)}>Zoom out</button>
      <button type="button" onClick=${() => cy.current?.fit(undefined, 24)}>Fit</button>
    </div>
    <div class="graph" ref=${box} role="img" aria-label=${`Graph of ${data.units.length} memory units and ${data.edges.length} edges; the same is listed below.`}></div>
    <details class="graph-list">
      <summary>Units and edges as a list</summary>
      <ul>${data.units.map((u) => html`<li><button type="button" class="link" onClick=${() => openUnit(u.id)}>${u.content}</button>
        ${data.edges.filter((e) => e.source_id === u.id).map((e) => html`<div class="muted small">${e.relation} → ${contentOf.get(e.target_id)}</div>`)}</li>`)}</ul>
    </details>`;
}
