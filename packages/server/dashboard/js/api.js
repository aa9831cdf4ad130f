/**
 * The dashboard's one way to the node: fetch on /v1 with the dashboard token (docs/api.md §1). The token
 * lives in sessionStorage (gone when the tab closes, never sent anywhere but this origin). A 401 on a
 * call made with a token means the token expired or is no longer valid: the token is dropped and the
 * app goes back to the login page.
 */
const TOKEN_KEY = 'strata.dashboard.token';

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  set: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** A failed call: the contract's error envelope ({error, code, details}) and the HTTP status. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `The node answered ${status}.`);
    this.status = status;
    this.code = body && body.code ? body.code : 'unknown';
    this.details = body && Array.isArray(body.details) ? body.details : [];
  }
}

const listeners = new Set();
/** Called when the session ends (an expired or invalid token, or logout). */
export function onSessionEnd(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
export function endSession() {
  session.clear();
  for (const l of listeners) l();
}

async function send(method, path, { body, query, token } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
  } catch (err) {
    throw new ApiError(0, { error: `The node could not be reached (${err.message}).`, code: 'network' });
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text.slice(0, 200) };
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** An authenticated /v1 call; a 401 ends the session. */
export async function api(method, path, options = {}) {
  const token = session.token();
  if (!token) {
    endSession();
    throw new ApiError(401, { error: 'Log in first.', code: 'unauthenticated' });
  }
  try {
    return await send(method, path, { ...options, token });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) endSession();
    throw err;
  }
}

/** When the token stops being valid (its `exp` claim), in ms since the epoch; null when it cannot be read. */
export function tokenExpiry(token) {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    return typeof payload.exp === 'number' ? payload.exp * 1000 : null;
  } catch {
    return null;
  }
}

/** POST /v1/dashboard/auth/login: here a 401 means wrong credentials, shown on the form. */
export async function login(username, password) {
  const answer = await send('POST', '/v1/dashboard/auth/login', { body: { username, password } });
  session.set(answer.token);
  return answer;
}

/** A path segment (user, org and key ids may hold any character but control characters). */
export const seg = encodeURIComponent;
export const userPath = (userId, rest = '') => `/v1/users/${seg(userId)}${rest}`;

/**
 * Retrieval needs a stream in its path; with `scope: user` (the default) it searches all the user's
 * streams and only gives this one a small boost. The nil UUID is a stream no client writes to, so no
 * stream is favoured.
 */
export const NO_STREAM = '00000000-0000-0000-0000-000000000000';
