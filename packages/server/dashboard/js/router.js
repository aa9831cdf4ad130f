/**
 * Client-side routing over the History API. The node answers index.html for each page's URL
 * (/dashboard/, /dashboard/keys, /dashboard/users/<id>, /dashboard/orgs/<id>), so every URL can be
 * bookmarked and reloaded; the query string holds a page's state (tab, selected unit, stream).
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

export const BASE = '/dashboard';
const listeners = new Set();

function current() {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function navigate(to, { replace = false } = {}) {
  if (to === location.pathname + location.search) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', to);
  for (const l of listeners) l();
}
addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function useLocation() {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const listener = () => setLoc(current());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return loc;
}

/** The page a path names, with its parameter. */
export function match(path) {
  if (path === `${BASE}/` || path === `${BASE}/index.html` || path === BASE) return { page: 'overview' };
  if (path === `${BASE}/keys`) return { page: 'keys' };
  const m = /^\/dashboard\/(users|orgs)\/([^/]+)$/.exec(path);
  if (m) return { page: m[1] === 'users' ? 'user' : 'org', id: decodeURIComponent(m[2]) };
  return { page: 'not_found' };
}

export const userUrl = (userId, query = {}) => withQuery(`${BASE}/users/${encodeURIComponent(userId)}`, query);
export const orgUrl = (orgId) => `${BASE}/orgs/${encodeURIComponent(orgId)}`;

/** A URL with query parameters (empty ones left out). */
export function withQuery(path, query) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** An ordinary link (new tab, copy address work) that navigates in place on a plain click. */
export function Link({ href, children, ...props }) {
  const onClick = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${props}>${children}</a>`;
}
