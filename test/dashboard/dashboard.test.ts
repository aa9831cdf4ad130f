/**
 * The dashboard (CONTRACT §15) in a real headless browser against a real node: the static files and
 * their headers, then a person's path through the app (log in, overview, a user seeded through the
 * API: search, unit detail with provenance and versions, graph, timeline, complete a task, forget with
 * preview; an org; create and revoke a key; phone width; an invalid token back to the login page).
 * Every step waits for what the page shows, never for a time. Screenshots go to a temporary folder, or
 * to STRATA_DASHBOARD_SCREENSHOTS (`npm run screenshots:dashboard` writes docs/dashboard/*.png).
 *
 * Also checked on every page: no Content-Security-Policy violation, no script error, and no request to
 * any host but the node.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { ensureChromium, launchChromium } from '../helpers/browser';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'dashboard-test-admin-key';
const PASSWORD = 'dashboard-pass-1';
const USER = 'dana';
const ORG = 'oceanlab';
const STREAM = '3c9d1f0e-7a2b-4c5d-8e6f-0a1b2c3d4e5f';
const TOKEN_KEY = 'strata.dashboard.token';

const chromium = ensureChromium();
if ('reason' in chromium) console.warn(`dashboard tests skipped: ${chromium.reason}`);
const describeWithBrowser = 'path' in chromium ? describe : describe.skip;

describeWithBrowser('dashboard in a headless browser', () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let shots: string;
  let keepShots = false;
  const problems: string[] = [];
  let portoId: string;

  const api = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown, key = KEY): Promise<{ status: number; body: T }> => {
    const res = await fetch(server.url + path, {
      method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const ingest = async (content: string, extra: Record<string, unknown> = {}) => {
    const res = await api<{ event_id: string }>('POST', `/v1/users/${USER}/streams/${STREAM}/events`, { content, role: 'user', ...extra });
    expect(res.status).toBe(200);
    return res.body.event_id;
  };
  /** Until every accepted event is consolidated (the node's own readiness figure, polled). */
  const consolidated = async () => {
    while (!(await api<{ ready: boolean }>('GET', '/v1/status/pending')).body.ready) await new Promise((r) => setTimeout(r, 50));
  };
  type Unit = { id: string; content: string };
  const units = async () => (await api<{ memories: Unit[] }>('GET', `/v1/users/${USER}/memories`)).body.memories;

  const bodyText = () => page.evaluate('document.body.innerText') as Promise<string>;
  const waitForText = (text: string) => page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`);
  const shot = async (name: string) => {
    await page.evaluate('window.scrollTo(0, 0)'); // clicks scroll their target into view; pictures start at the top
    await page.screenshot({ path: join(shots, `${name}.png`) });
  };
  /** Searches on the user page and waits for this query's answer (not a previous one still shown). */
  const search = async (query: string) => {
    await page.locator('#search-query').fill(query);
    await page.click('.search-form button[type="submit"]');
    await page.waitForFunction(`document.querySelector('#results-h')?.innerText.includes(${JSON.stringify(`“${query}”`)})`);
  };
  const button = (name: string) => page.waitForSelector(`::-p-aria([name=${JSON.stringify(name)}][role="button"])`);

  beforeAll(async () => {
    const target = process.env.STRATA_DASHBOARD_SCREENSHOTS;
    keepShots = Boolean(target);
    shots = target ? resolve(REPO_ROOT, target) : mkdtempSync(join(tmpdir(), 'strata-dashboard-'));
    mkdirSync(shots, { recursive: true });
    server = await startServer({
      // three shard groups, so the overview has a placement to show (all on this one node)
      env: { STRATA_API_KEY: KEY, STRATA_ADMIN_PASSWORD: PASSWORD, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA_SHARDS: '3' },
    });
    // Seeded through the API as an agent would: facts, org knowledge, a goal with tasks; then a correction.
    await ingest('I live in Lisbon.');
    await ingest('My favourite tea is jasmine tea.');
    await ingest('I work as a marine biologist at the aquarium.');
    await ingest('Our lab measures coral bleaching every spring.', { org_id: ORG });
    const goal = await ingest('Plan the Azores field trip', { level: 3 });
    await ingest('Book the ferry tickets', { parent_id: goal });
    await ingest('Pack the diving gear', { parent_id: goal });
    await consolidated();
    await ingest('I moved: I live in Porto now.');
    await consolidated();
    const seeded = await units();
    const find = (word: string) => seeded.find((u) => u.content.includes(word))!.id;
    portoId = find('Porto');
    expect((await api('POST', `/v1/users/${USER}/graph/edges`, { source_id: find('marine'), target_id: find('coral'), relation: 'RelatedTo' })).status).toBe(200);

    browser = await launchChromium((chromium as { path: string }).path);
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    // Record what a strict page must never do: break its CSP, throw, or reach another host.
    await page.evaluateOnNewDocument(`document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`);
    page.on('console', (m) => {
      // 401s are expected: the wrong password and the invalid token (each also checked on the page)
      if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) problems.push(`request to another host: ${r.url()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
    if (shots && !keepShots) rmSync(shots, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(problems).toEqual([]);
  });

  it('serves the app: deep links answer index.html with a self-only CSP, files their types, unknown files 404', async () => {
    for (const path of ['/dashboard/', `/dashboard/users/${USER}`, `/dashboard/orgs/${ORG}`, '/dashboard/keys']) {
      const res = await fetch(server.url + path);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'text/html; charset=utf-8']);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+';/);
      expect(csp).toContain("style-src 'self';");
      expect(await res.text()).toContain('<script type="importmap">');
    }
    const redirect = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([301, '/dashboard/']);
    for (const [path, type] of [['/dashboard/app.css', 'text/css'], ['/dashboard/js/main.js', 'javascript'], ['/dashboard/vendor/preact.mjs', 'text/javascript'], ['/dashboard/vendor/cytoscape.mjs', 'text/javascript']]) {
      const res = await fetch(server.url + path);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, expect.stringContaining(type)]);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const missing = await fetch(`${server.url}/dashboard/js/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'route_not_found' });
  });

  it('shows the error for a wrong password, then logs in and shows the overview with the user', async () => {
    await page.goto(`${server.url}/dashboard/`);
    await page.waitForSelector('input[name="username"]');
    await page.waitForSelector('::-p-aria([name="Password"])'); // the inputs are labelled
    await page.locator('input[name="username"]').fill('admin');
    await page.locator('input[name="password"]').fill('not-the-password');
    await shot('login');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="alert"]');
    expect(await bodyText()).toContain('Wrong username or password.');
    expect(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`)).toBeNull();

    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForSelector(`table.users a[href="/dashboard/users/${USER}"]`);
    await waitForText('Shard 0'); // cluster status
    await waitForText('Placement'); // the directory of the other groups
    expect(await page.$$eval('table.placement tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].slice(0, 2).map((c) => c.textContent)))).toEqual([['1', '1'], ['2', '1']]);
    await waitForText('Pending events');
    expect(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`)).toMatch(/^ey/);
    const text = await bodyText();
    expect(text).toContain('Leader');
    expect(text).toMatch(/Applied\s*\n?\s*\d+/);
    await shot('overview');
  });

  it('opens the user and finds a seeded fact with its score and why it ranked', async () => {
    await page.click(`table.users a[href="/dashboard/users/${USER}"]`);
    await page.waitForFunction(`document.querySelector('h1')?.innerText === 'User ${USER}'`);
    await search('marine biologist');
    const first = await page.$eval('.result-list .result', (li) => li.textContent ?? '');
    expect(first).toContain('I work as a marine biologist at the aquarium.');
    expect(first).toMatch(/0\.\d{3}/); // its score
    expect(first).toMatch(/why: .*words #\d/); // and why it ranked: the lists it came from
    await shot('user-search');
  });

  it('opens a unit: its source event (provenance), its versions and edges', async () => {
    await search('where do I live');
    const details = await button('Details of: I moved: I live in Porto now.');
    await details!.click();
    await page.waitForSelector('aside.detail .events .event');
    await page.waitForSelector('aside.detail .versions');
    const detail = await page.$eval('aside.detail', (el) => (el as unknown as { innerText: string }).innerText);
    expect(detail).toContain('Provenance');
    expect(detail).toMatch(/I moved: I live in Porto now\.\s*\n\s*user/); // the source event, said by the user
    expect(detail).toContain('I live in Lisbon.'); // the version it corrected
    expect(detail).toMatch(/EvolvedTo/);
    expect(page.url()).toContain(`unit=${portoId}`);
    await shot('user-unit-detail');

    await (await page.waitForSelector('aside.detail ::-p-text(Show in timeline)'))!.click();
    await page.waitForSelector('.timeline .event.highlighted');
    expect(await page.$eval('.timeline .event.highlighted', (el) => el.textContent)).toContain('I live in Porto now.');
    await shot('user-timeline');
  });

  it('draws the graph and clicks through a node to its unit', async () => {
    await page.click('#user-tab-graph');
    await page.waitForSelector('.graph[data-layout="done"] canvas');
    await waitForText('2 edges');
    // arrow keys move between tabs (the ARIA tabs pattern)
    await page.focus('#user-tab-graph');
    await page.keyboard.press('ArrowRight');
    await page.waitForSelector('#user-tab-timeline[aria-selected="true"]');
    await page.keyboard.press('ArrowLeft');
    await page.waitForSelector('.graph[data-layout="done"] canvas');
    await waitForText('2 edges');
    await shot('user-graph');
    // a real click on the node where Cytoscape drew it
    const at = await page.evaluate(`(() => {
      const box = document.querySelector('.graph');
      const node = box._cyreg.cy.nodes().filter((n) => n.data('label').startsWith('I work as')).first();
      const p = node.renderedPosition();
      const r = box.getBoundingClientRect();
      return { x: r.left + p.x, y: r.top + p.y };
    })()`) as { x: number; y: number };
    await page.mouse.click(at.x, at.y);
    await page.waitForFunction(`document.querySelector('aside.detail .unit-content')?.innerText === 'I work as a marine biologist at the aquarium.'`);
    await page.waitForFunction(`document.querySelector('aside.detail')?.innerText.includes('RelatedTo')`);
  });

  it('completes a task from the goal tree', async () => {
    await page.click('#user-tab-tasks');
    await page.waitForSelector('.goal');
    expect(await bodyText()).toContain('Plan the Azores field trip');
    await (await button('Complete Book the ferry tickets'))!.click();
    await waitForText('“Book the ferry tickets” is now completed.');
    await page.waitForFunction(`[...document.querySelectorAll('.task')].some((t) => t.innerText.includes('Book the ferry tickets') && t.querySelector('.badge.ok')?.innerText === 'completed')`);
    await shot('user-tasks');
    type Tree = { goal: { content: string; progress: number }; tasks: { task: { title: string; status: string } }[] }[];
    const tree = (await api<Tree>('GET', `/v1/users/${USER}/tasks/tree`)).body;
    expect(tree[0].tasks.map((n) => [n.task.title, n.task.status])).toEqual([['Book the ferry tickets', 'completed'], ['Pack the diving gear', 'pending']]);
    expect(tree[0].goal.progress).toBe(0.5);
  });

  it('previews a forget as a diff, executes it, and the unit is gone from search', async () => {
    const jasmine = (await units()).find((u) => u.content.includes('jasmine'))!;
    await page.click('#user-tab-forget');
    await page.locator('#forget-instruction').fill('Forget that my favourite tea is jasmine');
    await page.click('.forget-form button[type="submit"]');
    await page.waitForSelector('.preview .diff li.del del');
    expect(await page.$eval('.preview .diff li.del del', (el) => el.textContent)).toBe('My favourite tea is jasmine tea.');
    expect((await units()).map((u) => u.id)).toContain(jasmine.id); // the preview changed nothing
    await shot('user-forget-preview');
    await (await button('Execute this plan'))!.click();
    await waitForText('Executed: 1 unit changed');
    expect((await units()).map((u) => u.id)).not.toContain(jasmine.id);

    await page.click('#user-tab-search');
    await search('favourite tea jasmine');
    expect(await page.$eval('.results', (el) => el.textContent)).not.toContain('jasmine tea.');
  });

  it('shows an organization\'s knowledge and metrics', async () => {
    await page.select('#jump-kind', 'org');
    await page.locator('#jump-id').fill(ORG);
    await page.click('.jump button[type="submit"]');
    await page.waitForFunction(`document.querySelector('h1')?.innerText === 'Organization ${ORG}'`);
    await page.waitForSelector('.knowledge li');
    await page.waitForSelector('#metrics-h');
    const text = await bodyText();
    expect(text).toContain('Our lab measures coral bleaching every spring.');
    expect(text).toMatch(/Knowledge items\s*\n\s*1\n/);
    await shot('org');
  });

  it('creates a key shown once, and revokes it', async () => {
    await page.click('nav[aria-label="Main"] a[href="/dashboard/keys"]');
    await page.waitForSelector('#key-name');
    await page.locator('#key-name').fill('ci-reader');
    await page.select('#key-role', 'read');
    await page.locator('#key-users').fill(USER);
    await page.click('#create-h ~ form button[type="submit"]');
    await page.waitForSelector('#new-key-value');
    const key = await page.$eval('#new-key-value', (el) => (el as unknown as { value: string }).value);
    expect(key).toMatch(/^sk_[A-Za-z0-9]{36}$/);
    await page.waitForSelector('::-p-aria([name="Revoke ci-reader"])');
    await shot('keys');
    // the key works, within its scope
    expect((await api('GET', `/v1/users/${USER}/memories`, undefined, key)).status).toBe(200);
    expect((await api('GET', '/v1/users/someone-else/memories', undefined, key)).status).toBe(403);
    // shown once: gone from the page once acknowledged, and not in the list
    await (await button('I have saved it'))!.click();
    await page.waitForFunction(`!document.querySelector('#new-key-value')`);
    await page.reload();
    await page.waitForSelector('::-p-aria([name="Revoke ci-reader"])');
    expect(await page.content()).not.toContain(key);
    expect(await page.content()).toContain(key.slice(0, 8)); // its prefix identifies it

    page.once('dialog', (dialog) => void dialog.accept());
    await (await button('Revoke ci-reader'))!.click();
    await waitForText('revoked');
    await page.waitForFunction(`!document.body.innerText.includes('ci-reader')`);
    expect((await api('GET', `/v1/users/${USER}/memories`, undefined, key)).status).toBe(401);
  });

  it('fits a phone-width screen', async () => {
    await page.setViewport({ width: 390, height: 844 });
    await page.goto(`${server.url}/dashboard/users/${USER}?tab=search&unit=${portoId}`);
    await page.waitForSelector('aside.detail .versions');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await shot('phone-user-unit');
    await page.setViewport({ width: 1280, height: 800 });
  });

  it('returns to the login page when the token is invalid or expired', async () => {
    await page.evaluate(`sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, 'not-a-valid-token')`);
    await page.goto(`${server.url}/dashboard/users/${USER}`);
    await page.waitForSelector('input[name="password"]');
    await waitForText('Your session has ended');
    expect(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`)).toBeNull();
  });
});
