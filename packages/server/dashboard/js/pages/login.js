/** The login page: POST /v1/dashboard/auth/login with the form's username and password (docs/api.md §1). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { login } from '../api.js';
import { html } from '../html.js';

export function LoginPage({ onLoggedIn, notice }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const user = useRef(null);
  const pass = useRef(null);
  useEffect(() => {
    document.title = 'Log in · Strata';
    // uncontrolled inputs (a re-render must not reset what was typed); the one account is admin (§1)
    if (user.current && !user.current.value) user.current.value = 'admin';
    (user.current?.value ? pass.current : user.current)?.focus();
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const answer = await login(String(form.get('username')), String(form.get('password')));
      onLoggedIn(answer);
    } catch (err) {
      setError(err.status === 401 ? 'Wrong username or password.' : err.message);
      setBusy(false);
    }
  };
  return html`<main id="main" class="login">
    <form class="card login-card" onSubmit=${submit} aria-describedby=${error ? 'login-error' : undefined}>
      <h1>Strata</h1>
      <p class="muted">Log in to the dashboard of this node.</p>
      ${notice && !error ? html`<p class="notice" role="status">${notice}</p>` : null}
      ${error ? html`<p class="error" id="login-error" role="alert">${error}</p>` : null}
      <div class="field">
        <label for="login-username">Username</label>
        <input id="login-username" name="username" ref=${user} autocomplete="username" required />
      </div>
      <div class="field">
        <label for="login-password">Password</label>
        <input id="login-password" name="password" ref=${pass} type="password" autocomplete="current-password" required />
      </div>
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button>
    </form>
  </main>`;
}
