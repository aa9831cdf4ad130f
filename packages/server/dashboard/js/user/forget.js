/**
 * Forget or update by instruction (docs/api.md §7): the preview (which changes nothing) is shown as a diff,
 * removed lines for what would be forgotten or superseded, added ones for the new memory; then the plan
 * is executed exactly as previewed, or discarded (it expires by itself after 15 minutes).
 */
import { api, userPath } from '../api.js';
import { Badge, ErrorNote, Short, Time } from '../components.js';
import { wordDiff } from '../diff.js';
import { html } from '../html.js';

export const emptyForget = () => ({
  form: { instruction: '', mode: 'auto', forget_mode: 'logical', org_id: '', limit: '10' },
  preview: null, result: null, error: null, busy: false,
});

export function ForgetPanel({ userId, state, setState, openUnit }) {
  const { form, preview, result, error, busy } = state;
  const set = (name) => (e) => {
    const value = e.currentTarget.value;
    setState((s) => ({ ...s, form: { ...s.form, [name]: value } }));
  };
  const run = async (work) => {
    setState((s) => ({ ...s, busy: true, error: null }));
    try {
      const changes = await work();
      setState((s) => ({ ...s, busy: false, ...changes }));
    } catch (err) {
      setState((s) => ({ ...s, busy: false, error: err }));
    }
  };
  const previewPlan = (e) => {
    e.preventDefault();
    run(async () => ({
      result: null,
      preview: await api('POST', userPath(userId, '/memories/semantic/preview'), {
        body: { instruction: form.instruction, mode: form.mode, forget_mode: form.forget_mode, org_id: form.org_id.trim() || null, limit: Number(form.limit) },
      }),
    }));
  };
  const execute = () => run(async () => ({
    preview: null,
    result: await api('POST', userPath(userId, '/memories/semantic/execute'), {
      body: { plan_id: preview.plan_id, confirm: true, org_id: form.org_id.trim() || null, reviewer: 'dashboard' },
    }),
  }));
  return html`
    <form class="forget-form" onSubmit=${previewPlan}>
      <div class="field wide">
        <label for="forget-instruction">Instruction</label>
        <textarea id="forget-instruction" rows="2" required value=${form.instruction} onInput=${set('instruction')}
          placeholder="Forget everything about my old address. / My favourite colour is now green." aria-describedby="forget-hint"></textarea>
        <small id="forget-hint" class="muted">Nothing changes until you execute the previewed plan.</small>
      </div>
      <div class="fields">
        <div class="field"><label for="forget-mode">Mode</label>
          <select id="forget-mode" value=${form.mode} onChange=${set('mode')}>
            <option value="auto">auto (from the wording)</option><option value="forget">forget</option><option value="update">update</option>
          </select></div>
        <div class="field"><label for="forget-fmode">Forgetting</label>
          <select id="forget-fmode" value=${form.forget_mode} onChange=${set('forget_mode')}>
            <option value="logical">logical (as_of still sees it)</option><option value="hard">hard (delete)</option>
          </select></div>
        <div class="field"><label for="forget-limit">At most</label>
          <input id="forget-limit" type="number" min="1" max="25" value=${form.limit} onInput=${set('limit')} /></div>
        <div class="field"><label for="forget-org">Organization</label>
          <input id="forget-org" value=${form.org_id} onInput=${set('org_id')} placeholder="org id (optional)" autocomplete="off" /></div>
      </div>
      <button type="submit" class="primary" disabled=${busy}>Preview</button>
    </form>
    <${ErrorNote} error=${error} />
    ${result ? html`<p class="notice" role="status">Executed: ${result.affected_unit_ids.length} unit${result.affected_unit_ids.length === 1 ? '' : 's'} changed
      ${result.created_memory_unit_id ? html`, new unit <button type="button" class="link" onClick=${() => openUnit(result.created_memory_unit_id)}>${result.created_memory_unit_id.slice(0, 8)}</button>` : null}.</p>` : null}
    ${preview ? html`<section class="card preview" aria-labelledby="preview-h">
      <h2 id="preview-h">Preview: ${preview.kind === 'forget' ? `forget (${preview.forget_mode})` : 'update'}</h2>
      <p class="muted small">Plan <${Short} id=${preview.plan_id} />, valid until <${Time} iso=${preview.expires_at} />.</p>
      ${preview.forget_preview ? html`<${ForgetDiff} data=${preview.forget_preview} hard=${preview.forget_mode === 'hard'} />` : null}
      ${preview.update_preview ? html`<${UpdateDiff} data=${preview.update_preview} />` : null}
      <div class="actions">
        <button type="button" class="danger" disabled=${busy || nothingToDo(preview)} onClick=${execute}>Execute this plan</button>
        <button type="button" disabled=${busy} onClick=${() => setState((s) => ({ ...s, preview: null }))}>Discard</button>
      </div>
    </section>` : null}`;
}

function nothingToDo(preview) {
  if (preview.forget_preview) return preview.forget_preview.memory_units.length === 0 && preview.forget_preview.matched_events.length === 0;
  return false;
}

function ForgetDiff({ data, hard }) {
  if (data.memory_units.length === 0 && data.matched_events.length === 0) return html`<p class="muted">Nothing matches this instruction.</p>`;
  return html`
    <h3>Memory units</h3>
    <ul class="diff" aria-label="Units that would be forgotten">${data.memory_units.map((u) => html`<li class="del">
      <span class="sign" aria-hidden="true">−</span><del>${u.content}</del> <span class="visually-hidden">(would be forgotten)</span>
      <${Badge} kind="muted">L${u.level}</${Badge}>
    </li>`)}</ul>
    ${data.matched_events.length ? html`<h3>Events ${hard ? 'deleted too' : 'kept (logical forgetting keeps the record)'}</h3>
      <ul class=${hard ? 'diff' : 'diff kept'}>${data.matched_events.map((e) => html`<li class=${hard ? 'del' : 'same'}>
        <span class="sign" aria-hidden="true">${hard ? '−' : ' '}</span>${hard ? html`<del>${e.content}</del>` : e.content} <small class="muted"><${Time} iso=${e.transaction_time} /></small>
      </li>`)}</ul>` : null}`;
}

function UpdateDiff({ data }) {
  const next = data.new_unit ? data.new_unit.content : null;
  const changing = data.actions.filter((a) => a.action === 'obsolete' || a.action === 'contradicts');
  return html`
    <p>From: <q>${data.source_content}</q></p>
    ${changing.length === 0 && next ? html`<ul class="diff"><li class="ins"><span class="sign" aria-hidden="true">+</span><ins>${next}</ins> <span class="visually-hidden">(new memory)</span></li></ul>` : null}
    ${changing.map((a) => html`<div class="diff-block">
      <p class="meta"><${Badge} kind="warn">${a.action}</${Badge}> confidence ${a.confidence.toFixed(2)}: ${a.reason}</p>
      ${next ? html`<p class="inline-diff" aria-label="Change">${wordDiff(a.target_unit.content, next).map((p) => (p.op === 'del' ? html`<del>${p.text}</del>` : p.op === 'ins' ? html`<ins>${p.text}</ins>` : p.text))}</p>` : null}
      <ul class="diff"><li class="del"><span class="sign" aria-hidden="true">−</span><del>${a.target_unit.content}</del> <span class="visually-hidden">(superseded)</span></li>
        ${next ? html`<li class="ins"><span class="sign" aria-hidden="true">+</span><ins>${next}</ins> <span class="visually-hidden">(new)</span></li>` : null}</ul>
      <p class="muted small">${a.effect}</p>
    </div>`)}
    ${data.actions.filter((a) => a.action === 'reaffirm').map((a) => html`<p class="muted">Already stored: <q>${a.target_unit.content}</q> (${a.reason})</p>`)}
    ${!next && changing.length === 0 ? html`<p class="muted">The instruction only repeats what is stored: nothing would change.</p>` : null}`;
}
