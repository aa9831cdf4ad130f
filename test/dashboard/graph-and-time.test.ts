/**
 * The dashboard on imported history and a large graph, in a real headless browser against a real node:
 * a user whose 50 facts happened in 2023 but were stored today, linked by 180 edges of varied weight,
 * and a stream whose events were sent out of the order they happened.
 *
 * - The graph stays readable: relation labels are not drawn at that size, hiding weak edges and keeping
 *   only units with an edge shrink it to exactly what the data says, and a filter by a person keeps the
 *   units mentioning her and their neighbours. Screenshots of each state (a temporary folder, or
 *   STRATA_DASHBOARD_SCREENSHOTS) are taken and must hold a drawing.
 * - The timeline orders events by when they happened (storage order on request), each showing when it
 *   happened before when it was stored; the memory list shows both times in that order.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { ensureChromium, launchChromium } from '../helpers/browser';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'dashboard-graph-admin-key';
const PASSWORD = 'dashboard-graph-pass-1';
const USER = 'kai';
const STREAM = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const PEOPLE = ['Lena', 'Omar', 'Yuki', 'Bruno', 'Sade'];
const TOPICS = ['climbing', 'chess', 'sourdough', 'cycling', 'jazz', 'pottery', 'sailing', 'birding', 'poetry', 'robotics'];

const chromium = ensureChromium();
if ('reason' in chromium) console.warn(`dashboard tests skipped: ${chromium.reason}`);
const describeWithBrowser = 'path' in chromium ? describe : describe.skip;

/** A small seeded generator: the same graph every run. */
function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

describeWithBrowser('dashboard: a large graph and imported history', () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let shots: string;
  let keepShots = false;
  const problems: string[] = [];
  let units: { id: string; content: string }[] = [];
  let edges: { source_id: string; target_id: string; weight: number }[] = [];

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, {
      method, headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };
  const summary = () => page.$eval('.graph-summary', (el) => (el as unknown as { innerText: string }).innerText);
  const waitForSummary = async (start: string) => {
    try {
      await page.waitForFunction(`document.querySelector('.graph-summary')?.innerText.startsWith(${JSON.stringify(start)})`, { timeout: 20_000 });
    } catch (err) {
      throw new Error(`the graph summary did not start with "${start}": "${await summary().catch(() => 'no summary')}" (${(err as Error).message})`);
    }
  };
  const shot = async (name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path });
    expect(statSync(path).size).toBeGreaterThan(20_000); // a drawing, not an empty page
  };
  const setRange = (selector: string, value: number) => page.$eval(selector, (el, v) => {
    const input = el as unknown as { value: string; dispatchEvent(e: Event): boolean };
    input.value = String(v);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);

  beforeAll(async () => {
    const target = process.env.STRATA_DASHBOARD_SCREENSHOTS;
    keepShots = Boolean(target);
    shots = target ? resolve(REPO_ROOT, target) : mkdtempSync(join(tmpdir(), 'strata-dashboard-graph-'));
    mkdirSync(shots, { recursive: true });
    server = await startServer({ env: { STRATA_ADMIN_API_KEY: KEY, STRATA_ADMIN_PASSWORD: PASSWORD, STRATA__EMBEDDING__PROVIDER: 'hashing' } });

    // 50 facts about 2023, stored now (imported history), then 180 edges between them
    const random = rng(29);
    const facts = Array.from({ length: 50 }, (_, i) => ({
      content: `${PEOPLE[i % PEOPLE.length]} and Kai shared ${TOPICS[i % TOPICS.length]} session ${i}.`,
      valid_time: new Date(Date.UTC(2023, i % 12, 1 + (i % 27), 12)).toISOString(),
    }));
    const { memory_ids } = await api<{ memory_ids: string[] }>('POST', `/v1/users/${USER}/facts`, { facts });
    const made = memory_ids.map((id, i) => ({ id, content: facts[i].content }));
    while (edges.length < 180) {
      const a = Math.floor(random() * made.length);
      const b = Math.floor(random() * made.length);
      if (a === b || edges.some((e) => e.source_id === made[a].id && e.target_id === made[b].id)) continue;
      const weight = Math.round(random() * 100) / 100;
      edges.push({ source_id: made[a].id, target_id: made[b].id, weight });
    }
    // 20 at a time: each is a commit of its own, and one after the other they take minutes on a busy machine
    for (let i = 0; i < edges.length; i += 20) {
      await Promise.all(edges.slice(i, i + 20).map((e) => api('POST', `/v1/users/${USER}/graph/edges`, { ...e, relation: 'RelatedTo' })));
    }
    // a stream sent out of the order it happened
    await api('POST', `/v1/users/${USER}/streams/${STREAM}/events/batch`, {
      events: [
        { content: 'Kai started a pottery course.', valid_time: '2023-09-05T10:00:00.000Z' },
        { content: 'Kai moved to Lyon.', valid_time: '2023-02-01T10:00:00.000Z' },
        { content: 'Kai met Lena at the climbing gym.', valid_time: '2023-05-20T10:00:00.000Z' },
      ],
    });
    // consolidation adds its own units and links: the expected figures come from what the node holds
    while (!(await api<{ ready: boolean }>('GET', '/v1/status/pending')).ready) await new Promise((r) => setTimeout(r, 100));
    // Insights (L2 units and their edges) are planned once the user's memory has been quiet a while, at
    // most once per 10 s: the figures are read once they have stayed the same for longer than that.
    const read = async () => ({
      units: (await api<{ memories: { id: string; content: string }[] }>('GET', `/v1/users/${USER}/memories?include_retired=true&limit=1000`)).memories,
      edges: (await api<{ edges: { source_id: string; target_id: string; weight: number }[] }>('GET', `/v1/users/${USER}/graph/edges?limit=1000`)).edges,
    });
    let seen = await read();
    for (let stableSince = Date.now(), deadline = Date.now() + 150_000; Date.now() - stableSince < 12_000 && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await read();
      if (now.units.length !== seen.units.length || now.edges.length !== seen.edges.length) stableSince = Date.now();
      seen = now;
    }
    units = seen.units;
    edges = seen.edges;
    expect(units.length).toBeGreaterThanOrEqual(50);
    expect(edges.length).toBeGreaterThanOrEqual(180);

    browser = await launchChromium((chromium as { path: string }).path);
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
    // logged in as the login page would leave it: the token in this tab's session storage
    const { token } = await api<{ token: string }>('POST', '/v1/dashboard/auth/login', { username: 'admin', password: PASSWORD });
    await page.goto(`${server.url}/dashboard/`);
    await page.evaluate(`sessionStorage.setItem('strata.dashboard.token', ${JSON.stringify(token)})`);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
    if (shots && !keepShots) rmSync(shots, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(problems).toEqual([]);
  });

  it('draws 50 units and 180 edges without relation labels, then hides weak edges and unlinked units', async () => {
    await page.goto(`${server.url}/dashboard/users/${USER}?tab=graph`);
    await page.waitForSelector('.graph[data-layout="done"] canvas');
    const all = `${units.length} units, ${edges.length} edges.`;
    await waitForSummary(all);
    expect(await page.evaluate(`document.querySelector('.graph')._cyreg.cy.edges().first().style('label')`)).toBe('');
    await shot('user-graph-large');

    const strong = edges.filter((e) => e.weight >= 0.8);
    await setRange('#graph-weight', 0.8);
    await waitForSummary(`${units.length} units, ${strong.length} edges shown of ${units.length} and ${edges.length}`);
    await page.click('#graph-connected');
    const linked = new Set(strong.flatMap((e) => [e.source_id, e.target_id]));
    await waitForSummary(`${linked.size} units, ${strong.length} edges shown`);
    await page.waitForSelector('.graph[data-layout="done"] canvas');
    await shot('user-graph-strong-edges');
    expect(linked.size).toBeLessThan(units.length);
  }, 60_000);

  it('keeps the units mentioning a person and their neighbours', async () => {
    await page.click('#graph-connected'); // every unit again
    await setRange('#graph-weight', 0);
    await waitForSummary(`${units.length} units, ${edges.length} edges.`);
    await page.locator('#graph-filter').fill('Lena');
    const lena = new Set(units.filter((u) => u.content.toLowerCase().includes('lena')).map((u) => u.id));
    const shown = new Set(lena);
    for (const e of edges) {
      if (lena.has(e.source_id)) shown.add(e.target_id);
      if (lena.has(e.target_id)) shown.add(e.source_id);
    }
    const shownEdges = edges.filter((e) => shown.has(e.source_id) && shown.has(e.target_id));
    await waitForSummary(`${shown.size} units, ${shownEdges.length} edges shown of ${units.length} and ${edges.length}`);
    await page.waitForSelector('.graph[data-layout="done"] canvas');
    await shot('user-graph-filtered');
    expect(shown.size).toBeLessThan(units.length);
  }, 60_000);

  it('orders the timeline by when things happened, storage order on request, happened before stored', async () => {
    await page.goto(`${server.url}/dashboard/users/${USER}?tab=timeline&stream=${STREAM}`);
    await page.waitForSelector('.timeline .event');
    const contents = () => page.$$eval('.timeline .event .content', (els) => els.map((e) => e.textContent));
    expect(await contents()).toEqual(['Kai moved to Lyon.', 'Kai met Lena at the climbing gym.', 'Kai started a pottery course.']);
    const meta = await page.$eval('.timeline .event .meta', (el) => (el as unknown as { innerText: string }).innerText);
    expect(meta.indexOf('happened')).toBeLessThan(meta.indexOf('stored'));
    expect(meta).toContain('2023');
    await page.select('#timeline-order', 'stored');
    await page.waitForFunction(`document.querySelector('.timeline .event .content')?.textContent === 'Kai started a pottery course.'`);
    await page.select('#timeline-order', 'happened');
    await page.waitForFunction(`document.querySelector('.timeline .event .content')?.textContent === 'Kai moved to Lyon.'`);
    await shot('user-timeline-happened');
  }, 60_000);

  it('lists memories with when they happened first and when they were stored second', async () => {
    await page.goto(`${server.url}/dashboard/users/${USER}?tab=memories`);
    await page.waitForSelector('.unit-list .unit-row');
    const meta = await page.$eval('.unit-list .unit-row .meta', (el) => (el as unknown as { innerText: string }).innerText);
    expect(meta).toMatch(/happened\s.*2023.*stored/s);
  }, 60_000);
});
