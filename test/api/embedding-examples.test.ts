/**
 * The embedding examples (examples/embeddings/*.toml), each run as a user runs it: a real node started
 * with the file as its configuration, only base_url (and the key) pointed at a stand-in of the service
 * on 127.0.0.1 that speaks its real protocol (test/helpers/embedding-services.ts). Events are ingested,
 * consolidated with the service's vectors (none failing) and found again by retrieval; what the service
 * was sent is checked against what the example promises: the key, `dimensions` only where asked for,
 * batches the service accepts.
 */
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { FakeEmbeddingService, type ServiceKind } from '../helpers/embedding-services';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'embedding-examples-admin-key';
const STREAM = '3d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a';
const EVENTS = [
  ...Array.from({ length: 45 }, (_, i) => ({ content: `Entry ${i}: the weekly report number ${i} was filed on time.` })),
  { content: 'Priya keeps her passport in the green suitcase under the bed.' },
];

interface Case {
  file: string;
  kind: ServiceKind;
  apiKey: string | null;
  check(service: FakeEmbeddingService): void;
}

const CASES: Case[] = [
  {
    file: 'openai.toml', kind: 'openai', apiKey: 'sk-test-embedding-key',
    check: (s) => {
      expect(s.requests.every((r) => r.authorization === 'Bearer sk-test-embedding-key')).toBe(true);
      expect(s.requests.every((r) => r.body.model === 'text-embedding-3-small' && r.body.dimensions === 512)).toBe(true);
    },
  },
  {
    file: 'ollama.toml', kind: 'ollama', apiKey: null,
    check: (s) => {
      expect(s.requests.every((r) => r.body.model === 'nomic-embed-text' && r.body.dimensions === undefined && r.authorization === undefined)).toBe(true);
    },
  },
  {
    file: 'text-embeddings.toml', kind: 'tei', apiKey: null,
    check: (s) => {
      const sizes = s.requests.map((r) => (Array.isArray(r.body.input) ? r.body.input.length : 1));
      expect(Math.max(...sizes)).toBeLessThanOrEqual(32);
    },
  },
];

describe.each(CASES)('examples/embeddings/$file', ({ file, kind, apiKey, check }) => {
  let service: FakeEmbeddingService;
  let node: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    service = await new FakeEmbeddingService(kind, apiKey).start();
    node = await startServer({
      env: {
        STRATA_CONFIG: join(REPO_ROOT, 'examples/embeddings', file),
        STRATA__EMBEDDING__BASE_URL: `${service.url}/v1`,
        ...(apiKey ? { STRATA__EMBEDDING__API_KEY: apiKey } : {}),
        STRATA_ADMIN_API_KEY: KEY, STRATA_ADMIN_PASSWORD: 'a-long-password', STRATA__CONSOLIDATION__INTERVAL_MS: '50',
      },
    });
    client = new StrataClient({ baseUrl: node.url, apiKey: KEY });
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
    removeDir(node?.dataDir ?? '');
    await service?.stop();
  });

  it('consolidates with the service\'s vectors and retrieves by them', async () => {
    await client.ingestBatch('priya', STREAM, EVENTS);
    const status = await client.waitUntilReady(90_000, 200);
    expect(status).toMatchObject({ ready: true, failed: 0 });
    const answer = await client.retrieve('priya', STREAM, { query: 'Where does Priya keep her passport?', limit: 3 });
    expect(answer.results[0]?.unit.content).toContain('passport');
    expect(service.requests.length).toBeGreaterThan(0);
    expect(service.requests.some((r) => Array.isArray(r.body.input) && r.body.input.length > 1)).toBe(true); // batched
    check(service);
  }, 120_000);
});
