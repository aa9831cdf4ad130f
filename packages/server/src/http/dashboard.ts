/**
 * The dashboard (CONTRACT §15): a static web application served by every node at /dashboard/. No build
 * step: the browser loads the app's ES modules from packages/server/dashboard/ and the few libraries it
 * uses (Preact, htm, Cytoscape) straight from their packages in node_modules, named by an import map
 * that this module writes into index.html. Nothing comes from another host, so a node works offline.
 *
 * The static files need no credentials (they hold no data); every data call the app makes goes to /v1
 * with the token from the login route. Deep links of the app's own pages answer index.html, and the app
 * routes on the client. Every answer carries a Content-Security-Policy that allows this origin only (the
 * import map, the one inline script, by its hash).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';

/** Where the app's own files are (index.html, app.css, js/). */
export const DASHBOARD_DIR = resolve(__dirname, '..', '..', 'dashboard');
const BASE = '/dashboard';

/**
 * The libraries the app imports by bare name, each a file of an installed package: import-map name →
 * [package, path inside the package]. Served at /dashboard/vendor/<name>.mjs.
 */
const VENDOR: Record<string, [pkg: string, file: string]> = {
  preact: ['preact', 'dist/preact.mjs'],
  'preact/hooks': ['preact', 'hooks/dist/hooks.mjs'],
  htm: ['htm', 'dist/htm.mjs'],
  cytoscape: ['cytoscape', 'dist/cytoscape.esm.min.mjs'],
};

/** The client-side pages whose URLs answer index.html (anything else under /dashboard is a file or 404). */
const PAGES = [`${BASE}/`, `${BASE}/keys`, `${BASE}/users/:user_id`, `${BASE}/orgs/:org_id`];

/** A package's root folder: its entry resolved the way Node does, then up to the package.json naming it. */
function packageRoot(name: string): string {
  let dir = dirname(require.resolve(name));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package folder of ${name}`);
    dir = up;
  }
}

function vendorFiles(): Map<string, { url: string; path: string }> {
  const out = new Map<string, { url: string; path: string }>();
  for (const [name, [pkg, file]] of Object.entries(VENDOR)) {
    const path = join(packageRoot(pkg), file);
    if (!existsSync(path)) throw new Error(`the dashboard needs ${pkg}/${file}, which is not installed (run npm ci)`);
    out.set(name, { url: `${BASE}/vendor/${name.replace('/', '-')}.mjs`, path });
  }
  return out;
}

/**
 * index.html with the import map written in (at the `<!-- importmap -->` marker), and the CSP that
 * allows exactly that inline script. Computed once, when the node starts.
 */
function page(vendor: Map<string, { url: string }>): { html: string; csp: string } {
  const imports = Object.fromEntries([...vendor].map(([name, v]) => [name, v.url]));
  const map = JSON.stringify({ imports });
  const template = readFileSync(join(DASHBOARD_DIR, 'index.html'), 'utf8');
  if (!template.includes('<!-- importmap -->')) throw new Error('dashboard/index.html has no <!-- importmap --> marker');
  const html = template.replace('<!-- importmap -->', `<script type="importmap">${map}</script>`);
  const hash = createHash('sha256').update(map).digest('base64');
  const csp = [
    "default-src 'self'", `script-src 'self' 'sha256-${hash}'`, "style-src 'self'", "img-src 'self' data:",
    "connect-src 'self'", "font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}

/** Mounts /dashboard/ on the app (an AppDeps mount: before the /v1 routes, after the retired-route check). */
export function mountDashboard(app: express.Express): void {
  const vendor = vendorFiles();
  const { html, csp } = page(vendor);
  const secure = (_req: Request, res: Response, next: NextFunction) => {
    res.locals.route = BASE; // one label in the request metrics for every file of the app
    res.setHeader('content-security-policy', csp);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    // revalidate every time: a node upgraded in place must not leave browsers on old modules
    res.setHeader('cache-control', 'no-cache');
    next();
  };
  app.use(BASE, secure);
  // express matches /dashboard and /dashboard/ alike (non-strict routing): only the first is sent on
  app.get(BASE, (req, res, next) => (req.path === BASE ? res.redirect(301, `${BASE}/`) : next()));
  const sendPage = (_req: Request, res: Response) => {
    res.status(200).type('html').send(html);
  };
  for (const path of PAGES) app.get(path, sendPage);
  for (const v of vendor.values()) {
    app.get(v.url, (_req, res, next) => res.type('text/javascript').sendFile(v.path, (err) => err && next(err)));
  }
  // index.html as a file too, with the import map written in (before the static files, which hold it without)
  app.get(`${BASE}/index.html`, sendPage);
  app.use(BASE, express.static(DASHBOARD_DIR, { index: false, redirect: false, dotfiles: 'ignore', cacheControl: false }));
}
