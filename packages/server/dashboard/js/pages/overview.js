/**
 * The overview (/dashboard/): the consolidation backlog and how fast it drains, what is stored, the
 * cluster as this node sees it, and the users to start from. Backlog and cluster are polled every few
 * seconds; the drain rate is computed here from successive backlog figures.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Loading, fmtDuration, useAsync, useInterval } from '../components.js';
import { html } from '../html.js';
import { Link, orgUrl, userUrl } from '../router.js';

const POLL_MS = 3000;
/** Backlog samples kept for the drain rate (the oldest and newest are compared). */
const SAMPLES = 10;
const USER_PAGE = 200;

/** Events consolidated per second between the oldest and newest samples; null until two samples. */
export function drainRate(samples) {
  if (samples.length < 2) return null;
  const a = samples[0];
  const b = samples[samples.length - 1];
  const seconds = (b.at - a.at) / 1000;
  return seconds > 0 ? (a.pending - b.pending) / seconds : null;
}

export function OverviewPage() {
  const [samples, setSamples] = useState([]);
  const [pendingError, setPendingError] = useState(null);
  const [cluster, setCluster] = useState({ data: null, error: null });
  const poll = async () => {
    await Promise.all([
      api('GET', '/v1/status/pending').then(
        (p) => {
          setSamples((s) => [...s, { ...p, at: performance.now() }].slice(-SAMPLES));
          setPendingError(null);
        },
        (err) => setPendingError(err),
      ),
      api('GET', '/v1/cluster/status').then((data) => setCluster({ data, error: null }), (error) => setCluster((c) => ({ ...c, error }))),
    ]);
  };
  useEffect(() => {
    poll();
  }, []);
  useInterval(poll, POLL_MS);
  const latest = samples[samples.length - 1];
  return html`
    <h1 tabindex="-1">Overview</h1>
    <div class="grid-2">
      <${Backlog} latest=${latest} rate=${drainRate(samples)} error=${pendingError} />
      <${Cluster} state=${cluster} />
    </div>
    <${Users} />`;
}

function Stat({ label, value, hint }) {
  return html`<div class="stat"><dt>${label}</dt><dd>${value}${hint ? html` <small class="muted">${hint}</small>` : null}</dd></div>`;
}

function Backlog({ latest, rate, error }) {
  let drain = 'measuring…';
  if (rate !== null) drain = rate > 0.05 ? `${rate.toFixed(1)} events/s` : rate < -0.05 ? `growing by ${(-rate).toFixed(1)} events/s` : 'steady';
  return html`<section class="card" aria-labelledby="backlog-h">
    <h2 id="backlog-h">Consolidation backlog</h2>
    <${ErrorNote} error=${error} />
    ${latest ? html`<dl class="stats" aria-live="polite">
      <${Stat} label="Pending events" value=${latest.pending} hint=${latest.ready ? 'all consolidated' : null} />
      <${Stat} label="Drain rate" value=${drain} />
      <${Stat} label="Oldest pending" value=${fmtDuration(latest.oldest_pending_ms)} />
      <${Stat} label="Failed" value=${latest.failed} />
    </dl>` : html`<${Loading} />`}
    <p class="muted small">Refreshed every ${POLL_MS / 1000} s.</p>
  </section>`;
}

function Cluster({ state }) {
  const { data, error } = state;
  return html`<section class="card" aria-labelledby="cluster-h">
    <h2 id="cluster-h">Cluster${data ? html` <small class="muted">(seen from node ${data.node_id})</small>` : null}</h2>
    <${ErrorNote} error=${error} />
    ${!data ? html`<${Loading} />` : data.shards.filter((s) => s.holds !== false).map((s) => html`
      <div class="shard">
        <h3>Shard ${s.shard_id}</h3>
        <dl class="stats compact">
          <${Stat} label="Leader" value=${s.leader ?? 'none'} />
          <${Stat} label="Term" value=${s.term} />
          <${Stat} label="Role here" value=${s.role} />
          <${Stat} label="Commit" value=${s.commit_index} />
          <${Stat} label="Applied" value=${s.applied_index} hint=${s.commit_index - s.applied_index > 0 ? `${s.commit_index - s.applied_index} behind` : null} />
        </dl>
        <div class="table-wrap"><table>
          <caption class="visually-hidden">Members of shard ${s.shard_id}</caption>
          <thead><tr><th scope="col">Node</th><th scope="col">Address</th><th scope="col">Voter</th><th scope="col">Match</th><th scope="col">Lag</th></tr></thead>
          <tbody>${s.members.map((m) => html`<tr>
            <td>${m.node_id}${m.node_id === s.leader ? html` <span class="badge ok">leader</span>` : null}</td>
            <td><code>${m.url}</code></td>
            <td>${m.voter ? 'yes' : 'no'}</td>
            <td>${m.match_index ?? '—'}</td>
            <td>${m.match_index === null || m.match_index === undefined ? '—' : Math.max(0, s.commit_index - m.match_index)}</td>
          </tr>`)}</tbody>
        </table></div>
      </div>`)}
    ${data ? html`<${Placement} placement=${data.placement} />` : null}
  </section>`;
}

/**
 * Where every shard group but 0 lives (the placement directory): shard 0 is on every node, each other
 * group on replication_factor nodes; the groups this node holds are detailed above.
 */
function Placement({ placement }) {
  if (!placement || placement.groups.length === 0) return null;
  const round = placement.last_round;
  return html`<div class="shard">
    <h3>Placement</h3>
    <p class="muted small">Each shard group but 0 on ${placement.replication_factor} nodes.${round
      ? ` Last round ${new Date(round.at).toLocaleTimeString()}: ${round.moves_in_flight} move(s) in flight, ${round.under_replicated} group(s) short of replicas.`
      : ''}</p>
    <div class="table-wrap"><table class="placement">
      <caption class="visually-hidden">Placement of the shard groups</caption>
      <thead><tr><th scope="col">Shard</th><th scope="col">Voters</th><th scope="col">Learners</th><th scope="col">Leader</th><th scope="col">Move</th></tr></thead>
      <tbody>${placement.groups.map((g) => html`<tr>
        <td>${g.group_id}</td>
        <td>${g.voters.join(', ')}</td>
        <td>${g.learners.length ? g.learners.join(', ') : '—'}</td>
        <td>${g.leader ?? 'none'}</td>
        <td>${g.move ? `to node ${g.move.to}${g.move.from === null ? '' : ` from node ${g.move.from}`} (${g.move.reason})` : '—'}</td>
      </tr>`)}</tbody>
    </table></div>
  </div>`;
}

/** Every user in pages (GET /v1/users), with totals over the pages loaded so far. */
function Users() {
  const [pages, setPages] = useState([]);
  const [filter, setFilter] = useState('');
  const first = useAsync(async () => {
    const page = await api('GET', '/v1/users', { query: { limit: USER_PAGE } });
    setPages([page]);
    return page;
  }, []);
  // the first page is refreshed with the polling (further pages stay as loaded)
  useInterval(() => pages.length <= 1 && first.reload(), POLL_MS * 5);
  const [moreError, setMoreError] = useState(null);
  const next = pages.length ? pages[pages.length - 1].next_cursor : null;
  const more = async () => {
    try {
      const page = await api('GET', '/v1/users', { query: { limit: USER_PAGE, after: next } });
      setPages((p) => [...p, page]);
    } catch (err) {
      setMoreError(err);
    }
  };
  const users = pages.flatMap((p) => p.users);
  const totals = users.reduce((t, u) => {
    for (const k of Object.keys(t)) t[k] += u.counts[k] ?? 0;
    return t;
  }, { events: 0, memory_units: 0, goals: 0, tasks: 0, pending: 0 });
  const shown = filter ? users.filter((u) => u.user_id.toLowerCase().includes(filter.toLowerCase()) || (u.org_id ?? '').toLowerCase().includes(filter.toLowerCase())) : users;
  return html`<section class="card" aria-labelledby="users-h">
    <h2 id="users-h">Users</h2>
    <${ErrorNote} error=${first.error ?? moreError} />
    <dl class="stats">
      <${Stat} label="Users" value=${`${users.length}${next ? '+' : ''}`} />
      <${Stat} label="Events" value=${totals.events} />
      <${Stat} label="Memory units" value=${totals.memory_units} hint="every version" />
      <${Stat} label="Goals" value=${totals.goals} />
      <${Stat} label="Tasks" value=${totals.tasks} />
    </dl>
    <div class="field inline">
      <label for="user-filter">Filter users</label>
      <input id="user-filter" type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} placeholder="user or org id" />
    </div>
    ${first.loading && !users.length ? html`<${Loading} />` : null}
    ${users.length === 0 && !first.loading ? html`<p class="muted">No users yet: ingest an event and it appears here.</p>` : null}
    ${shown.length ? html`<div class="table-wrap"><table class="users">
      <thead><tr><th scope="col">User</th><th scope="col">Organization</th><th scope="col" class="num">Events</th><th scope="col" class="num">Units</th>
        <th scope="col" class="num">Goals</th><th scope="col" class="num">Tasks</th><th scope="col" class="num">Pending</th></tr></thead>
      <tbody>${shown.map((u) => html`<tr>
        <th scope="row"><${Link} href=${userUrl(u.user_id)}>${u.user_id}</${Link}></th>
        <td>${u.org_id ? html`<${Link} href=${orgUrl(u.org_id)}>${u.org_id}</${Link}>` : html`<span class="muted">none</span>`}</td>
        <td class="num">${u.counts.events}</td><td class="num">${u.counts.memory_units}</td><td class="num">${u.counts.goals}</td>
        <td class="num">${u.counts.tasks}</td><td class="num">${u.counts.pending}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${next ? html`<button type="button" onClick=${more}>Load more users</button>` : null}
  </section>`;
}
