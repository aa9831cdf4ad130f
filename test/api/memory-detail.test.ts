/**
 * One unit with its history (CONTRACT §2 `GET /v1/users/:user_id/memories/:id`: versions, edges, source
 * events) and the two listings the dashboard draws from (extensions): a user's edges and a user's
 * streams, each paged by cursor.
 */
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'memory-detail-test-key';
const A = '0a0b0c0d-1111-4222-8333-444455556666';
const B = 'ffffffff-1111-4222-8333-444455556666';
const USER = 'rui';

interface UnitView { id: string; content: string; retired_at: string | null; superseded_by: string | null; references: string[] }
interface Detail {
  unit: UnitView;
  versions: UnitView[];
  edges: { edge_id: string; source_id: string; target_id: string; relation: string; weight: number; created_at: string }[];
  neighbours: UnitView[];
  source_events: { event_id: string; content: string; stream_id: string; role: string | null }[];
}

describe('memory detail, edges and streams', () => {
  let server: ServerProcess;
  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(server.url + path, {
      method, headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const ingest = async (stream: string, content: string) => {
    expect((await call('POST', `/v1/users/${USER}/streams/${stream}/events`, { content, role: 'user' })).status).toBe(200);
  };
  const consolidated = async () => {
    while (!(await call<{ ready: boolean }>('GET', '/v1/status/pending')).body.ready) await new Promise((r) => setTimeout(r, 50));
  };
  let all: UnitView[];
  const unit = (word: string) => all.find((u) => u.content.includes(word))!;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    await ingest(A, 'I live in Lisbon.');
    await ingest(A, 'I play the cello in an orchestra.');
    await consolidated();
    await ingest(B, 'I moved: I live in Porto now.');
    await consolidated();
    await ingest(B, 'I moved again: I live in Braga now.');
    await consolidated();
    all = (await call<{ memories: UnitView[] }>('GET', `/v1/users/${USER}/memories?include_retired=true`)).body.memories;
    expect(all).toHaveLength(4);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('answers a unit with its whole correction chain, oldest first, from any version', async () => {
    const chain = ['Lisbon', 'Porto', 'Braga'].map((w) => unit(w).id);
    for (const id of chain) {
      const res = await call<Detail>('GET', `/v1/users/${USER}/memories/${id.toUpperCase()}`);
      expect(res.status).toBe(200);
      expect(res.body.unit.id).toBe(id);
      expect(res.body.versions.map((v) => v.id)).toEqual(chain);
    }
    const lisbon = (await call<Detail>('GET', `/v1/users/${USER}/memories/${chain[0]}`)).body;
    expect(lisbon.unit).toMatchObject({ superseded_by: chain[1] });
    expect(lisbon.unit.retired_at).not.toBeNull();
    expect(lisbon.versions[2].retired_at).toBeNull(); // Braga is current
    const cello = (await call<Detail>('GET', `/v1/users/${USER}/memories/${unit('cello').id}`)).body;
    expect(cello.versions.map((v) => v.id)).toEqual([unit('cello').id]);
  });

  it('answers its source events (provenance) with their stream, and its edges with the units at their other ends', async () => {
    const porto = (await call<Detail>('GET', `/v1/users/${USER}/memories/${unit('Porto').id}`)).body;
    expect(porto.source_events).toEqual([expect.objectContaining({ event_id: porto.unit.references[0], content: 'I moved: I live in Porto now.', stream_id: B, role: 'user' })]);
    // consolidation linked the corrections: Lisbon EvolvedTo Porto EvolvedTo Braga
    expect(porto.edges.map((e) => [e.relation, e.source_id, e.target_id]).sort()).toEqual([
      ['EvolvedTo', unit('Lisbon').id, unit('Porto').id], ['EvolvedTo', unit('Porto').id, unit('Braga').id],
    ].sort());
    expect(porto.neighbours.map((n) => n.content).sort()).toEqual(['I live in Lisbon.', 'I moved again: I live in Braga now.']);
    const made = await call<{ edge_id: string }>('POST', `/v1/users/${USER}/graph/edges`, { source_id: unit('cello').id, target_id: unit('Braga').id, relation: 'RelatedTo', weight: 0.4 });
    expect(made.status).toBe(200);
    const cello = (await call<Detail>('GET', `/v1/users/${USER}/memories/${unit('cello').id}`)).body;
    expect(cello.edges).toEqual([expect.objectContaining({ edge_id: made.body.edge_id, relation: 'RelatedTo', weight: 0.4, source_id: unit('cello').id })]);
  });

  it('answers 404 for an unknown unit, a malformed id, and another user\'s unit', async () => {
    for (const path of [`/v1/users/${USER}/memories/6f1e2d3c-4b5a-4697-8877-665544332211`, `/v1/users/${USER}/memories/not-a-unit`, `/v1/users/someone-else/memories/${unit('cello').id}`]) {
      const res = await call('GET', path);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'not_found']);
    }
  });

  it('lists the user\'s edges in pages', async () => {
    type Page = { edges: { edge_id: string }[]; next_cursor: string | null };
    const whole = (await call<Page>('GET', `/v1/users/${USER}/graph/edges`)).body;
    expect(whole.edges).toHaveLength(3);
    expect(whole.next_cursor).toBeNull();
    const paged: string[] = [];
    let after: string | null = null;
    do {
      const res: { body: Page } = await call<Page>('GET', `/v1/users/${USER}/graph/edges?limit=1${after ? `&after=${after}` : ''}`);
      paged.push(...res.body.edges.map((e) => e.edge_id));
      after = res.body.next_cursor;
    } while (after !== null);
    expect(paged).toEqual(whole.edges.map((e) => e.edge_id));
    expect((await call('GET', `/v1/users/${USER}/graph/edges?limit=0`)).status).toBe(400);
    expect((await call<Page>('GET', '/v1/users/nobody/graph/edges')).body).toEqual({ edges: [], next_cursor: null });
  });

  it('lists the streams the user has events in, with their first and last event times, in pages', async () => {
    type Page = { streams: { stream_id: string; first_event_at: string; last_event_at: string }[]; next_cursor: string | null };
    const whole = (await call<Page>('GET', `/v1/users/${USER}/streams`)).body;
    expect(whole.streams.map((s) => s.stream_id)).toEqual([A, B]);
    expect(whole.next_cursor).toBeNull();
    const [a, b] = whole.streams;
    for (const s of whole.streams) {
      const events = (await call<{ events: { transaction_time: string }[] }>('GET', `/v1/users/${USER}/streams/${s.stream_id}/events`)).body.events;
      expect([s.first_event_at, s.last_event_at]).toEqual([events[0].transaction_time, events[events.length - 1].transaction_time]);
    }
    const first = (await call<Page>('GET', `/v1/users/${USER}/streams?limit=1`)).body;
    expect(first).toEqual({ streams: [a], next_cursor: A });
    expect((await call<Page>('GET', `/v1/users/${USER}/streams?limit=1&after=${A.toUpperCase()}`)).body).toEqual({ streams: [b], next_cursor: null });
    const bad = await call('GET', `/v1/users/${USER}/streams?after=not-a-stream`);
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    expect((await call<Page>('GET', '/v1/users/nobody/streams')).body).toEqual({ streams: [], next_cursor: null });
  });
});
