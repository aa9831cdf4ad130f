/**
 * A node whose Raft host stopped (a synced write or an apply failed: RaftHost.stop) applies and
 * acknowledges nothing again until it restarts. Every write it is asked for then, of any group, is
 * answered 503 with the contract's envelope and Retry-After (retry on another node), never 500 with the
 * raw cause (which the node's log names), and /readyz takes it out of a balancer's pool. The failure is
 * a real one in the apply path: the state machine's batch is refused, as a failing disk would.
 */
import { loadConfig, StrataNode } from '@strata/server';
import { removeDir, tempDir } from '../helpers/server-process';

const KEY = 'stopped-host-test-admin-key';
const STREAM = '66666666-6666-4666-8666-666666666666';

describe('a node stopped by a failed apply', () => {
  let dataDir: string;
  let node: StrataNode;

  beforeAll(async () => {
    dataDir = tempDir();
    node = await StrataNode.start(loadConfig({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_PORT: '0',
        STRATA_HOST: '127.0.0.1', STRATA__LOG__LEVEL: 'silent', STRATA_DATA_DIR: dataDir, STRATA_SHARDS: '2',
      },
    }));
  });
  afterAll(async () => {
    await node?.stop().catch(() => undefined);
    removeDir(dataDir);
  });

  const write = (user: string, content: string) => fetch(`${node.url}/v1/users/${user}/streams/${STREAM}/events`, {
    method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ content }),
  });

  it('answers every write 503 with the envelope, and is not ready', async () => {
    const shards = node.services.shards;
    // one user of each group: the failure is in group 1, the other write is for group 0
    const users = Array.from({ length: 64 }, (_, i) => `stopped-${i}`);
    const inOne = users.find((u) => shards.forUser(u).id === 1)!;
    const inZero = users.find((u) => shards.forUser(u).id === 0)!;
    expect((await write(inOne, 'before')).status).toBe(200);
    expect((await fetch(`${node.url}/readyz`)).status).toBe(200);

    const sm = shards.forUser(inOne).sm;
    sm.applyBatch = async () => {
      throw new Error('injected: the disk refused the batch');
    };
    for (const [user, content] of [[inOne, 'the write whose apply fails'], [inOne, 'after'], [inZero, 'another group, after']]) {
      const r = await write(user, content);
      const body = (await r.json()) as Record<string, unknown>;
      expect([content, r.status, body.code, typeof body.error, r.headers.get('retry-after')]).toEqual([content, 503, 'unavailable', 'string', '1']);
      expect(String(body.error)).toMatch(/stopped serving .*retry on another node/);
      expect(JSON.stringify(body)).not.toMatch(/injected|stack/);
    }
    const ready = await fetch(`${node.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toMatch(/storage or apply failure/);
  });
});
