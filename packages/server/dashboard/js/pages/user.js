/**
 * A user's memory (/dashboard/users/<user_id>): tabs for search, the stored units, the graph, the
 * events timeline, goals and tasks, and forget/update; the selected unit's detail beside them. The
 * tab, the selected unit and the timeline's stream are in the query string, so every view has a URL.
 */
import { useState } from 'preact/hooks';
import { Tabs } from '../components.js';
import { html } from '../html.js';
import { navigate, userUrl } from '../router.js';
import { SearchPanel, emptySearch } from '../user/search.js';
import { MemoriesPanel } from '../user/memories.js';
import { GraphPanel } from '../user/graph.js';
import { TimelinePanel } from '../user/timeline.js';
import { TasksPanel } from '../user/tasks.js';
import { ForgetPanel, emptyForget } from '../user/forget.js';
import { UnitDetail } from '../user/detail.js';

const TABS = [
  { id: 'search', label: 'Search' },
  { id: 'memories', label: 'Memories' },
  { id: 'graph', label: 'Graph' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'tasks', label: 'Goals & tasks' },
  { id: 'forget', label: 'Forget / update' },
];

export function UserPage({ userId, query }) {
  const tab = TABS.some((t) => t.id === query.get('tab')) ? query.get('tab') : 'search';
  const unitId = query.get('unit');
  // Form state of the search and forget panels lives here, so it survives switching tabs.
  const [search, setSearch] = useState(emptySearch);
  const [forget, setForget] = useState(emptyForget);
  const [forUser, setForUser] = useState(userId);
  if (forUser !== userId) {
    setForUser(userId);
    setSearch(emptySearch());
    setForget(emptyForget());
  }
  const go = (changes) => navigate(userUrl(userId, { ...Object.fromEntries(query), ...changes }));
  const openUnit = (id) => go({ unit: id });
  const openEvent = (streamId, eventId) => go({ tab: 'timeline', stream: streamId, event: eventId });
  const props = { userId, openUnit, selectedUnit: unitId };
  let panel;
  if (tab === 'search') panel = html`<${SearchPanel} ...${props} state=${search} setState=${setSearch} />`;
  else if (tab === 'memories') panel = html`<${MemoriesPanel} ...${props} />`;
  else if (tab === 'graph') panel = html`<${GraphPanel} ...${props} />`;
  else if (tab === 'timeline') panel = html`<${TimelinePanel} ...${props} streamId=${query.get('stream')} eventId=${query.get('event')} selectStream=${(s) => go({ stream: s, event: null })} />`;
  else if (tab === 'tasks') panel = html`<${TasksPanel} ...${props} />`;
  else panel = html`<${ForgetPanel} ...${props} state=${forget} setState=${setForget} />`;
  return html`
    <h1 tabindex="-1">User <span class="mono">${userId}</span></h1>
    <div class=${unitId ? 'user-layout with-detail' : 'user-layout'}>
      <div class="user-main">
        <${Tabs} id="user" label="User memory views" tabs=${TABS} selected=${tab} onSelect=${(t) => go({ tab: t, event: null })}>${panel}</${Tabs}>
      </div>
      ${unitId ? html`<${UnitDetail} key=${unitId} userId=${userId} unitId=${unitId} openUnit=${openUnit} openEvent=${openEvent} onClose=${() => go({ unit: null })} />` : null}
    </div>`;
}
