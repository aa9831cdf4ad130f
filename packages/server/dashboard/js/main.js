/**
 * The Strata dashboard (docs/api.md §15): log in, then the page the URL names. Preact + htm, loaded as
 * ES modules from the node itself (see packages/server/src/http/dashboard.ts and docs/dashboard.md).
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, endSession, onSessionEnd, session, tokenExpiry } from './api.js';
import { html } from './html.js';
import { Link, match, navigate, orgUrl, useLocation, userUrl, BASE } from './router.js';
import { LoginPage } from './pages/login.js';
import { OverviewPage } from './pages/overview.js';
import { UserPage } from './pages/user.js';
import { OrgPage } from './pages/org.js';
import { KeysPage } from './pages/keys.js';

function App() {
  const [loggedIn, setLoggedIn] = useState(() => session.token() !== null);
  const [notice, setNotice] = useState(null);
  useEffect(() => onSessionEnd(() => {
    setNotice('Your session has ended (the token expired or is no longer valid). Log in again.');
    setLoggedIn(false);
  }), []);
  if (!loggedIn) {
    return html`<${LoginPage} notice=${notice} onLoggedIn=${() => {
      setNotice(null);
      setLoggedIn(true);
    }} />`;
  }
  return html`<${Shell} />`;
}

const PAGE_TITLES = { overview: 'Overview', keys: 'API keys', user: 'User', org: 'Organization', not_found: 'Not found' };

/**
 * Ends the session when the token expires, and asks the node once whether the token it starts with is
 * still valid (a page that makes no call at first would otherwise show until the first click).
 */
function useSessionCheck() {
  useEffect(() => {
    const token = session.token();
    const expiry = token ? tokenExpiry(token) : null;
    // setTimeout holds at most 2^31-1 ms (24.8 days); tokens live 24 h by default
    const timer = expiry === null ? null : setTimeout(endSession, Math.min(Math.max(0, expiry - Date.now()), 2 ** 31 - 1));
    api('GET', '/v1/status/pending').catch(() => undefined); // a 401 ends the session (api.js)
    return () => timer !== null && clearTimeout(timer);
  }, []);
}

function Shell() {
  useSessionCheck();
  const loc = useLocation();
  const route = match(loc.path);
  const main = useRef(null);
  const first = useRef(true);
  // After a navigation, move focus to the page's heading so keyboard and screen reader users start there.
  useEffect(() => {
    document.title = `${PAGE_TITLES[route.page]}${route.id ? `: ${route.id}` : ''} · Strata`;
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector('h1')?.focus();
  }, [loc.path]);
  let page;
  if (route.page === 'overview') page = html`<${OverviewPage} />`;
  else if (route.page === 'keys') page = html`<${KeysPage} />`;
  else if (route.page === 'user') page = html`<${UserPage} userId=${route.id} query=${loc.query} />`;
  else if (route.page === 'org') page = html`<${OrgPage} orgId=${route.id} />`;
  else page = html`<h1 tabindex="-1">Page not found</h1><p>No dashboard page at <code>${loc.path}</code>. <${Link} href=${`${BASE}/`}>Go to the overview</${Link}>.</p>`;
  const current = (name) => (route.page === name ? 'page' : undefined);
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <${Link} class="brand" href=${`${BASE}/`}>Strata</${Link}>
      <nav aria-label="Main">
        <${Link} href=${`${BASE}/`} aria-current=${current('overview')}>Overview</${Link}>
        <${Link} href=${`${BASE}/keys`} aria-current=${current('keys')}>API keys</${Link}>
      </nav>
      <${JumpForm} />
      <button type="button" class="ghost" onClick=${endSessionByUser}>Log out</button>
    </header>
    <main id="main" ref=${main} tabindex="-1">${page}</main>`;
}

function endSessionByUser() {
  session.clear();
  // a full reload: nothing of the session stays in memory
  location.assign(`${BASE}/`);
}

/** Open a user's or an organization's page by id. */
function JumpForm() {
  const [kind, setKind] = useState('user');
  const [id, setId] = useState('');
  const submit = (e) => {
    e.preventDefault();
    const value = id.trim();
    if (!value) return;
    navigate(kind === 'user' ? userUrl(value) : orgUrl(value));
    setId('');
  };
  return html`<form class="jump" role="search" aria-label="Open a user or organization" onSubmit=${submit}>
    <label class="visually-hidden" for="jump-kind">Kind</label>
    <select id="jump-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
      <option value="user">User</option><option value="org">Organization</option>
    </select>
    <label class="visually-hidden" for="jump-id">Id</label>
    <input id="jump-id" value=${id} onInput=${(e) => setId(e.currentTarget.value)} placeholder="id" autocomplete="off" />
    <button type="submit">Open</button>
  </form>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the boot message (render adds to what is there)
render(html`<${App} />`, root);
