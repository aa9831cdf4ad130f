/**
 * Goals and their task trees (GET .../tasks/tree?view=full) with status changes (PUT .../tasks/:id/status,
 * docs/api.md §8): complete a task in one click, or set any status (reopening a finished one says so).
 */
import { useState } from 'preact/hooks';
import { api, userPath, seg } from '../api.js';
import { Badge, ErrorNote, Loading, Time, statusKind, useAsync } from '../components.js';
import { html } from '../html.js';

const STATUSES = ['pending', 'in_progress', 'blocked', 'completed', 'failed', 'cancelled'];
const TERMINAL = new Set(['completed', 'cancelled']);
const pct = (p) => `${Math.round(p * 100)}%`;

export function TasksPanel({ userId }) {
  const trees = useAsync(() => api('GET', userPath(userId, '/tasks/tree'), { query: { view: 'full' } }), [userId]);
  const [error, setError] = useState(null);
  const [done, setDone] = useState(null);
  const setStatus = async (task, status) => {
    setError(null);
    setDone(null);
    try {
      const body = { status, ...(TERMINAL.has(task.status) ? { reopen: true } : {}) };
      const updated = await api('PUT', userPath(userId, `/tasks/${seg(task.task_id)}/status`), { body });
      setDone(`“${updated.title}” is now ${updated.status.replace('_', ' ')}.`);
      trees.reload();
    } catch (err) {
      setError(err);
    }
  };
  return html`
    <${ErrorNote} error=${trees.error ?? error} />
    ${done ? html`<p class="notice" role="status">${done}</p>` : null}
    ${trees.loading && !trees.data ? html`<${Loading} />` : null}
    ${trees.data && trees.data.length === 0 ? html`<p class="muted">No goals yet. Events with <code>level: 3</code>, tasks with <code>parent_id</code>, and plans in text make them.</p>` : null}
    ${(trees.data ?? []).map(({ goal, tasks }) => html`<section class="goal card" aria-labelledby=${`goal-${goal.id}`}>
      <h2 id=${`goal-${goal.id}`} class="goal-title">${goal.content}</h2>
      <p class="meta"><${Badge} kind=${statusKind(goal.status)}>${goal.status.replace('_', ' ')}</${Badge}>
        <progress max="1" value=${goal.progress} aria-label=${`Progress of the goal: ${pct(goal.progress)}`}></progress>
        <span>${pct(goal.progress)}</span><span>· since <${Time} iso=${goal.transaction_time} /></span></p>
      ${tasks.length ? html`<${TaskList} nodes=${tasks} setStatus=${setStatus} />` : html`<p class="muted">No tasks under this goal.</p>`}
    </section>`)}`;
}

function TaskList({ nodes, setStatus }) {
  return html`<ul class="tasks">${nodes.map(({ task, children }) => html`<li>
    <${TaskRow} key=${`${task.task_id}:${task.status}`} task=${task} setStatus=${setStatus} />
    ${children.length ? html`<${TaskList} nodes=${children} setStatus=${setStatus} />` : null}
  </li>`)}</ul>`;
}

function TaskRow({ task, setStatus }) {
  const [choice, setChoice] = useState(task.status);
  const [busy, setBusy] = useState(false);
  const run = async (status) => {
    setBusy(true);
    await setStatus(task, status);
    setBusy(false);
  };
  const id = `status-${task.task_id}`;
  return html`<div class="task" data-task-id=${task.task_id}>
    <div class="task-main">
      <span class="task-title">${task.title}</span>
      <${Badge} kind=${statusKind(task.status)}>${task.status.replace('_', ' ')}</${Badge}>
      <progress max="1" value=${task.progress} aria-label=${`Progress of ${task.title}: ${pct(task.progress)}`}></progress>
      ${task.status_reason ? html`<span class="muted small">(${task.status_reason})</span>` : null}
      ${task.result_summary ? html`<span class="muted small">${task.result_summary}</span>` : null}
    </div>
    <div class="task-actions">
      ${task.status !== 'completed' ? html`<button type="button" disabled=${busy} onClick=${() => run('completed')}
        aria-label=${`Complete ${task.title}`}>Complete</button>` : null}
      <label class="visually-hidden" for=${id}>Status of ${task.title}</label>
      <select id=${id} value=${choice} onChange=${(e) => setChoice(e.currentTarget.value)}>
        ${STATUSES.map((s) => html`<option value=${s}>${s.replace('_', ' ')}</option>`)}
      </select>
      <button type="button" disabled=${busy || choice === task.status} onClick=${() => run(choice)}
        aria-label=${`Set the status of ${task.title}`}>Set</button>
    </div>
  </div>`;
}
