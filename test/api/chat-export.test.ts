/**
 * Chat exports in: an OpenAI-style list of messages `[{role, content, name?, timestamp?}]` is one
 * conversation, one event a message (`messages` on the batch route, a JSON array given to `strata
 * ingest`), with name → metadata.speaker and timestamp → valid_time; any other shape is a 400 naming the
 * message and field, never one blob of text.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient, type EventView } from '@strata/client';
import { REPO_ROOT, removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const KEY = 'chat-export-test-admin-key';
const BIN = join(REPO_ROOT, 'node_modules', '.bin', 'strata');
const S = '6f1c2a3e-1111-4222-8333-944455556666';

describe('chat exports', () => {
  let server: ServerProcess;
  let client: StrataClient;
  const batch = (user: string, body: unknown) => client.raw<{ event_ids?: string[]; code?: string; error?: string; details?: { path: string; message: string }[] }>('POST', `/v1/users/${user}/streams/${S}/events/batch`, { body });

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_API_KEY: KEY, STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('stores each message as an event in order, with its speaker and time', async () => {
    const res = await batch('rui', { messages: [
      { role: 'user', content: 'I moved to Porto in May.', timestamp: '2025-06-01T10:00:00Z' },
      { role: 'assistant', content: [{ type: 'text', text: 'Noted: Porto.' }], timestamp: 1748772060 },
      { role: 'user', name: 'Ana', content: 'Rui, the flat on Rua das Flores is yours.' },
      { role: 'tool', content: '{"booking":"ZX81K","seat":"19D"}' },
    ] });
    expect(res.status).toBe(200);
    expect(res.body.event_ids).toHaveLength(4);
    const events = (await client.listEvents('rui', S)).events as EventView[];
    expect(events.map((e) => [e.role, e.content_type, e.content])).toEqual([
      ['user', 'text', 'I moved to Porto in May.'],
      ['assistant', 'text', 'Noted: Porto.'],
      ['user', 'text', 'Rui, the flat on Rua das Flores is yours.'],
      ['tool', 'json', '{"booking":"ZX81K","seat":"19D"}'],
    ]);
    expect(events[0].valid_time).toBe('2025-06-01T10:00:00.000Z');
    expect(events[1].valid_time).toBe('2025-06-01T10:01:00.000Z');
    expect(events[2].metadata).toEqual({ speaker: 'Ana' });
  });

  it.each([
    ['a message without a role', { messages: [{ content: 'hi there' }] }, '/messages/0/role'],
    ['an unknown role', { messages: [{ role: 'robot', content: 'beep' }] }, '/messages/0/role'],
    ['content that is not text', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, '/messages/0/content/0'],
    ['empty content', { messages: [{ role: 'user', content: '   ' }] }, '/messages/0/content'],
    ['a field chat messages do not have', { messages: [{ role: 'user', content: 'hi', mood: 'happy' }] }, '/messages/0/mood'],
    ['a time that is not one', { messages: [{ role: 'user', content: 'hi', timestamp: 'yesterday' }] }, '/messages/0/timestamp'],
    ['a message that is not an object', { messages: ['just a string'] }, '/messages/0'],
    ['both events and messages', { events: [{ content: 'a' }], messages: [{ role: 'user', content: 'b' }] }, '/'],
    ['neither', {}, '/'],
  ])('refuses %s with 400 naming it, and stores nothing', async (_name, body, path) => {
    const before = (await client.listEvents('refused', S)).events.length;
    const res = await batch('refused', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.details?.map((d) => d.path)).toContain(path);
    expect((await client.listEvents('refused', S)).events.length).toBe(before);
  });

  it('strata ingest reads a JSON array as one conversation, one event a message', () => {
    const dir = tempDir();
    try {
      const file = join(dir, 'chat.json');
      writeFileSync(file, JSON.stringify([
        { role: 'user', content: 'My name is Hana.', timestamp: '2025-01-05T07:00:00Z' },
        { role: 'assistant', content: 'Hi Hana!' },
        { role: 'user', content: 'I run on Tuesdays.' },
      ], null, 2));
      const run = spawnSync(BIN, ['ingest', file, '--user', 'hana', '--stream', S, '--json'],
        { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_URL: server.url, STRATA_API_KEY: KEY }, encoding: 'utf8', timeout: 60_000 });
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'accepted', count: 3 });
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '[{"role": "user", "content": "a"}, {"role": "user"}]');
      const refused = spawnSync(BIN, ['ingest', bad, '--user', 'hana', '--stream', S],
        { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_URL: server.url, STRATA_API_KEY: KEY }, encoding: 'utf8', timeout: 60_000 });
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toMatch(/messages\/1\/content/);
      expect(refused.stderr).toMatch(/message 2 of the input/);
    } finally {
      removeDir(dir);
    }
  }, 120_000);
});
