/**
 * Semantic forget/update over real HTTP (CONTRACT §7): preview (changes nothing but the stored plan),
 * execute (does what the preview showed), and each refusal: confirm not true 400, unknown plan 404,
 * another user's plan 403, executed twice 404, bad fields 400. Expiry is checked by the apply tests.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'semantic-test-admin-key';
const STREAM = '2f3e4d5c-6b7a-4890-8a1b-2c3d4e5f6a7b';

interface UnitView { id: string; content: string; level: number; retired_at: string | null; superseded_by: string | null; references: string[] }

describe('semantic forget and update', () => {
  let server: ServerProcess;
  let client: StrataClient;

  const units = async (user = 'iris', all = true) =>
    (await client.raw<{ memories: UnitView[] }>('GET', `/v1/users/${user}/memories?limit=1000${all ? '&include_retired=true' : ''}`)).body.memories;
  const execute = (body: unknown, user = 'iris') =>
    client.raw<{ code: string; status: string; affected_unit_ids: string[] }>('POST', `/v1/users/${user}/memories/semantic/execute`, { body });

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (const content of ['I like pizza.', 'I live in Berlin.', 'My favourite colour is teal.', 'My sister Anna plays the violin.']) {
      await client.ingest('iris', STREAM, { content });
    }
    await client.ingest('jon', STREAM, { content: 'I like pizza.' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('logical forget: the preview changes nothing; execution hides the units, keeps them for history, and runs once', async () => {
    const before = await units();
    const pizza = before.find((u) => u.content === 'I like pizza.')!;
    const preview = await client.semanticPreview('iris', { instruction: 'Please forget that I like pizza' });
    expect(preview).toMatchObject({ kind: 'forget', instruction: 'Please forget that I like pizza' });
    expect(Date.parse(preview.expires_at) - Date.parse(preview.created_at)).toBe(15 * 60_000);
    expect(preview.forget_preview!.memory_units.map((u) => u.id)).toEqual([pizza.id]);
    expect(preview.forget_preview!.matched_events.map((e) => e.id)).toEqual(pizza.references);
    expect(await units()).toEqual(before);

    // Refusals first: nothing happens for any of them.
    expect((await execute({ plan_id: preview.plan_id })).status).toBe(400);
    expect((await execute({ plan_id: preview.plan_id, confirm: false })).status).toBe(400);
    expect((await execute({ plan_id: '9a8b7c6d-1111-4222-8333-444455556666', confirm: true })).status).toBe(404);
    const foreign = await execute({ plan_id: preview.plan_id, confirm: true }, 'jon');
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('forbidden');
    expect((await execute({ plan_id: preview.plan_id, confirm: true, org_id: 'some-org' })).status).toBe(403);
    expect(await units()).toEqual(before);
    expect((await units('jon')).every((u) => u.retired_at === null)).toBe(true);

    const done = await client.semanticExecute('iris', { plan_id: preview.plan_id, confirm: true, reviewer: 'qa', note: 'asked by the user' });
    expect(done).toEqual({ status: 'executed', plan_id: preview.plan_id, kind: 'forget', affected_unit_ids: [pizza.id] });
    expect((await units('iris', false)).map((u) => u.id)).not.toContain(pizza.id);
    expect((await units()).find((u) => u.id === pizza.id)!.retired_at).not.toBeNull();
    const again = await execute({ plan_id: preview.plan_id, confirm: true });
    expect(again.status).toBe(404);
  });

  it('hard forget deletes the units and their source events', async () => {
    const teal = (await units()).find((u) => u.content.includes('teal'))!;
    const preview = await client.semanticPreview('iris', { instruction: 'Delete my favourite colour', forget_mode: 'hard' });
    expect(preview.forget_preview!.memory_units.map((u) => u.id)).toEqual([teal.id]);
    const done = await client.semanticExecute('iris', { plan_id: preview.plan_id, confirm: true });
    expect(done.affected_unit_ids).toEqual([teal.id]);
    expect((await units()).map((u) => u.id)).not.toContain(teal.id);
    const events = (await client.allEvents('iris', STREAM)).map((e) => e.event_id);
    for (const id of teal.references) expect(events).not.toContain(id);
  });

  it('update: the preview names the obsolete unit; execution creates the new one and supersedes the old', async () => {
    const berlin = (await units()).find((u) => u.content === 'I live in Berlin.')!;
    const preview = await client.semanticPreview('iris', { instruction: 'I live in Lisbon now' });
    expect(preview.kind).toBe('update');
    const obsolete = preview.update_preview!.actions.filter((a) => a.action === 'obsolete');
    expect(obsolete.map((a) => a.target_unit_id)).toEqual([berlin.id]);
    expect(obsolete[0].target_unit.content).toBe('I live in Berlin.');
    const done = await client.semanticExecute('iris', { plan_id: preview.plan_id, confirm: true });
    expect(done).toMatchObject({ status: 'executed', kind: 'update', affected_unit_ids: [berlin.id] });
    const created = done.created_memory_unit_id!;
    const now = await units();
    expect(now.find((u) => u.id === berlin.id)).toMatchObject({ superseded_by: created });
    expect(now.find((u) => u.id === berlin.id)!.retired_at).not.toBeNull();
    expect(now.find((u) => u.id === created)).toMatchObject({ level: 1, retired_at: null });
    const found = await client.retrieve('iris', STREAM, { query: 'Where do I live?' });
    expect(found.results.map((r) => r.unit.id)).toContain(created);
  });

  it('answers 400 for bad preview input, 403 for a read-only key', async () => {
    const post = (body: unknown) => client.raw<{ code: string; details: { path: string }[] }>('POST', '/v1/users/iris/memories/semantic/preview', { body });
    for (const [body, path] of [
      [{}, '/instruction'], [{ instruction: '' }, '/instruction'], [{ instruction: 'forget pizza', mode: 'purge' }, '/mode'],
      [{ instruction: 'forget pizza', forget_mode: 'soft' }, '/forget_mode'], [{ instruction: 'forget pizza', limit: 0 }, '/limit'],
    ] as [unknown, string][]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe(path);
    }
    expect((await execute({ confirm: true })).status).toBe(400);
    const reader = await client.createApiKey({ role: 'read' });
    const readOnly = new StrataClient({ baseUrl: server.url, apiKey: reader.key });
    try {
      expect((await readOnly.raw('POST', '/v1/users/iris/memories/semantic/preview', { body: { instruction: 'forget pizza' } })).status).toBe(403);
    } finally {
      await readOnly.close();
    }
  });
});
