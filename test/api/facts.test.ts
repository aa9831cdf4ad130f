/**
 * Facts in (CONTRACT §2 `POST /v1/users/:user_id/facts`): L1 units straight from the caller, found at
 * once, correcting by subject and attribute like consolidation, atomic, and refused clearly.
 */
import { StrataClient, type RetrieveResponse } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'facts-test-admin-key';
const S = '2f0b6b0e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';

interface Listed { id: string; content: string; level: number; references: string[]; retired_at: string | null; superseded_by: string | null }

describe('facts in', () => {
  let server: ServerProcess;
  let client: StrataClient;
  const facts = (user: string, body: unknown) => client.raw<{ status: string; memory_ids: string[]; code?: string; details?: { path: string }[] }>('POST', `/v1/users/${user}/facts`, { body });
  const memories = async (user: string) => (await client.raw<{ memories: Listed[] }>('GET', `/v1/users/${user}/memories?include_retired=true`)).body.memories;
  const retrieve = async (user: string, query: string) => (await client.raw<RetrieveResponse>('POST', `/v1/users/${user}/streams/${S}/retrieve`, { body: { query, include_pending: false } })).body.results;

  beforeAll(async () => {
    // no consolidation: whatever is found comes from the facts route alone
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('stores each fact as an L1 unit at once, searchable in the very next request', async () => {
    const res = await facts('lena', { facts: [
      { content: 'Lena is allergic to shellfish.', keywords: ['allergy', 'shellfish'] },
      { content: 'Lena works as a translator in Ghent.', stream_id: S.toUpperCase() },
    ] });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('accepted');
    expect(res.body.memory_ids).toHaveLength(2);
    const found = await retrieve('lena', 'What is Lena allergic to?');
    expect(found[0].unit).toMatchObject({ id: res.body.memory_ids[0], level: 1, references: [] });
    const units = await memories('lena');
    expect(units.map((u) => u.id).sort()).toEqual([...res.body.memory_ids].sort());
    expect(units.find((u) => u.id === res.body.memory_ids[1])).toMatchObject({ content: 'Lena works as a translator in Ghent.' });
  });

  it('corrects by subject and attribute: a new value supersedes, the same value reinforces', async () => {
    const first = (await facts('tom', { facts: [{ content: 'Tom lives in Lisbon.', subject: 'tom', attribute: 'residence' }] })).body.memory_ids[0];
    const moved = (await facts('tom', { facts: [{ content: 'Tom lives in Berlin.', subject: 'tom', attribute: 'residence' }] })).body.memory_ids[0];
    const units = await memories('tom');
    expect(units.find((u) => u.id === first)).toMatchObject({ superseded_by: moved });
    expect(units.find((u) => u.id === first)!.retired_at).not.toBeNull();
    expect(units.find((u) => u.id === moved)!.retired_at).toBeNull();
    expect((await retrieve('tom', 'Where does Tom live?')).map((r) => r.unit.id)).not.toContain(first);
    // the same fact again: the current unit holds it already
    const again = (await facts('tom', { facts: [{ content: 'Tom lives in Berlin.', subject: 'tom', attribute: 'residence' }] })).body.memory_ids[0];
    expect(again).toBe(moved);
    expect((await memories('tom')).length).toBe(2);
  });

  it('is atomic and refuses bad input with the envelope, naming the fact', async () => {
    const before = await memories('ivy');
    const bad = await facts('ivy', { facts: [{ content: 'Ivy plays the cello.' }, { content: '   ' }] });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    expect(JSON.stringify(bad.body.details)).toContain('/facts/1');
    const half = await facts('ivy', { facts: [{ content: 'Ivy plays the cello.' }, { content: 'Ivy lives in Oslo.', subject: 'ivy' }] });
    expect([half.status, half.body.code]).toEqual([400, 'validation_failed']);
    expect(JSON.stringify(half.body.details)).toContain('/facts/1/attribute');
    expect((await facts('ivy', { facts: [{ content: 'x', memory_type: 'opinion' }] })).status).toBe(400);
    expect((await facts('ivy', {})).status).toBe(400);
    expect(await memories('ivy')).toEqual(before);
    expect((await facts('ivy', { facts: [] })).body).toEqual({ status: 'accepted', memory_ids: [] });
    const tooMany = await facts('ivy', { facts: Array.from({ length: 1001 }, (_, i) => ({ content: `fact ${i}` })) });
    expect(tooMany.status).toBe(413);
  });
});
