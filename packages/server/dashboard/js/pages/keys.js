/**
 * API keys (/dashboard/keys, docs/api.md §1): create one with a role and a scope (an org, users, both or
 * neither), see it once, list the keys, revoke one.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { ErrorNote, Loading, Time, useAsync } from '../components.js';
import { html } from '../html.js';

export function KeysPage() {
  const keys = useAsync(() => api('GET', '/v1/dashboard/api-keys'), []);
  const [created, setCreated] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const revoke = async (k) => {
    if (!confirm(`Revoke the key ${k.key_prefix}…${k.name ? ` (${k.name})` : ''}? Clients using it get 401 from now on.`)) return;
    setError(null);
    try {
      await api('DELETE', `/v1/dashboard/api-keys/${seg(k.key_id)}`);
      setNotice(`Key ${k.key_prefix}… revoked.`);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  return html`
    <h1 tabindex="-1">API keys</h1>
    <div class="grid-2">
      <${CreateKey} onCreated=${(k) => {
        setCreated(k);
        setNotice(null);
        keys.reload();
      }} />
      ${created ? html`<${NewKey} created=${created} onDone=${() => setCreated(null)} />` : null}
    </div>
    <section class="card" aria-labelledby="keys-h">
      <h2 id="keys-h">Keys</h2>
      <${ErrorNote} error=${keys.error ?? error} />
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
      ${keys.loading && !keys.data ? html`<${Loading} />` : null}
      ${keys.data && keys.data.api_keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : null}
      ${keys.data && keys.data.api_keys.length ? html`<div class="table-wrap"><table class="keys">
        <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Organization</th>
          <th scope="col">Users</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${keys.data.api_keys.map((k) => html`<tr data-key-id=${k.key_id}>
          <td><code>${k.key_prefix}…</code></td><td>${k.name ?? html`<span class="muted">—</span>`}</td><td>${k.role}</td>
          <td>${k.org_id ?? html`<span class="muted">any</span>`}</td><td>${k.user_ids ? k.user_ids.join(', ') : html`<span class="muted">any</span>`}</td>
          <td><${Time} iso=${k.created_at} /></td>
          <td><button type="button" class="danger" onClick=${() => revoke(k)} aria-label=${`Revoke ${k.name ?? k.key_prefix}`}>Revoke</button></td>
        </tr>`)}</tbody>
      </table></div>` : null}
    </section>`;
}

function CreateKey({ onCreated }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const users = String(data.get('user_ids')).split(/[\s,]+/).filter(Boolean);
    const body = {
      name: String(data.get('name')).trim() || null, role: String(data.get('role')),
      org_id: String(data.get('org_id')).trim() || null, user_ids: users.length ? users : null,
    };
    setBusy(true);
    setError(null);
    try {
      onCreated(await api('POST', '/v1/dashboard/api-keys', { body }));
      form.reset();
    } catch (err) {
      setError(err);
    }
    setBusy(false);
  };
  return html`<section class="card" aria-labelledby="create-h">
    <h2 id="create-h">Create a key</h2>
    <form onSubmit=${submit}>
      <div class="field"><label for="key-name">Name</label><input id="key-name" name="name" maxlength="256" autocomplete="off" /></div>
      <div class="field"><label for="key-role">Role</label>
        <select id="key-role" name="role">
          <option value="read">read: retrieve, context, listings</option>
          <option value="write" selected>write: read + ingest, tasks, maintenance</option>
          <option value="admin">admin: everything, keys and cluster included</option>
        </select></div>
      <div class="field"><label for="key-org">Organization</label>
        <input id="key-org" name="org_id" autocomplete="off" aria-describedby="key-org-hint" />
        <small id="key-org-hint" class="muted">Only this org's users and knowledge; empty: no org limit.</small></div>
      <div class="field"><label for="key-users">Users</label>
        <input id="key-users" name="user_ids" autocomplete="off" aria-describedby="key-users-hint" />
        <small id="key-users-hint" class="muted">Comma-separated user ids; empty: every user (within the org, if set).</small></div>
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>Create key</button>
    </form>
  </section>`;
}

/** The new key, shown this once (only its hash is stored). */
function NewKey({ created, onDone }) {
  const box = useRef(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    box.current?.focus();
    box.current?.select();
  }, [created.key_id]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      box.current?.select();
    }
  };
  return html`<section class="card new-key" aria-labelledby="newkey-h" role="region">
    <h2 id="newkey-h">New key${created.name ? `: ${created.name}` : ''}</h2>
    <p role="status"><strong>Copy it now:</strong> it is shown only this once.</p>
    <label class="visually-hidden" for="new-key-value">The new API key</label>
    <input id="new-key-value" class="mono key-value" readonly value=${created.key} ref=${box} />
    <div class="actions">
      <button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
      <button type="button" onClick=${onDone}>I have saved it</button>
    </div>
  </section>`;
}
