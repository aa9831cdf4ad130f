/**
 * Organization knowledge and listings see every contributor, whatever characters its user id holds
 * (issue 11, item 9; docs/security.md "Key encoding"). Key ranges used to end at prefix + '\xff', which
 * in LevelDB's UTF-8 byte order cut off every user id starting at U+00FF or above. Contributors here come
 * from every Unicode plane, include U+00FF, U+FFFF, U+10FFFF, astral emoji, separator-like characters
 * and ids that extend one another, spread over two shards; a second org whose id extends the first's
 * must never bleed into it.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'org-key-ranges-admin-key';
const STREAM = '2f1e0d9c-8b7a-4695-a4b3-c2d1e0f9a8b7';
const ORG = 'acme';
const NEIGHBOUR_ORG = 'acme\u00ff'; // extends ORG: its keys sort right after ORG's range
const WORD = 'zebracorn';

const CONTRIBUTORS = [
  'plain-ascii',
  'caf\u00e9', // Latin-1, below U+00FF
  '\u00ff', // ÿ alone: exactly the old bound
  '\u00ffsterreich',
  '\u0100-a-macron', // first above Latin-1
  '\u4e2d\u6587\u7528\u6237', // CJK (BMP)
  '\ud7ff-before-surrogates',
  '\ue000-private-use', // sorts after astral characters in UTF-16, before them in UTF-8
  '\ufffd',
  '\uffff', // last BMP code point
  '\u{10000}-linear-b', // plane 1, first
  '\u{1F600}\u{1F680}', // astral emoji
  '\u{20000}-cjk-ext-b', // plane 2
  '\u{E0001}-tag', // plane 14
  '\u{10FFFF}', // last code point (plane 16)
  'a/b', 'a:b', 'a%2Fb', 'a b', 'a\u2400b', 'a|b', 'a\u00a0b', // separator-like characters (U+2400 is the symbol for NUL)
  'ann', 'ann\u00ff', 'annie', // one id extending another
];

describe('org key ranges over user ids of every Unicode plane', () => {
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA_SHARDS: '2', STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (const [i, user] of CONTRIBUTORS.entries()) {
      await client.ingest(user, STREAM, { content: `The ${WORD} policy number ${i} was written down by this contributor.`, org_id: ORG });
    }
    await client.ingest('outsider', STREAM, { content: `The ${WORD} rule of the neighbouring org is different.`, org_id: NEIGHBOUR_ORG });
    expect((await client.waitUntilReady(60_000, 50)).pending).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('lists every contributor in the org knowledge, counts them in the metrics, and filters by each', async () => {
    const list = await client.orgKnowledge(ORG, { limit: 500 });
    const contributors = new Set(list.items.flatMap((i) => i.contributor_user_ids));
    expect([...contributors].sort()).toEqual([...CONTRIBUTORS].sort());
    expect(list.summary.contributor_count).toBe(CONTRIBUTORS.length);
    expect((await client.orgKnowledgeMetrics(ORG)).contributor_count).toBe(CONTRIBUTORS.length);
    for (const user of CONTRIBUTORS) {
      const mine = await client.orgKnowledge(ORG, { contributor: user });
      expect({ user, count: mine.items.length }).toEqual({ user, count: 1 });
      expect(mine.items[0].contributor_user_ids).toEqual([user]);
    }
  });

  it('keeps an org whose id extends another apart from it', async () => {
    const neighbour = await client.orgKnowledge(NEIGHBOUR_ORG, { limit: 500 });
    expect(neighbour.items.flatMap((i) => i.contributor_user_ids)).toEqual(['outsider']);
    const own = await client.orgKnowledge(ORG, { limit: 500 });
    expect(own.items.some((i) => i.contributor_user_ids.includes('outsider'))).toBe(false);
  });

  it("lists each contributor's own memories, and only theirs", async () => {
    for (const [i, user] of CONTRIBUTORS.entries()) {
      const res = await client.raw<{ memories: { content: string }[] }>('GET', `/v1/users/${encodeURIComponent(user)}/memories?limit=100`);
      expect({ user, status: res.status }).toEqual({ user, status: 200 });
      expect({ user, contents: res.body.memories.map((m) => m.content) }).toEqual({ user, contents: [expect.stringContaining(`number ${i} `)] });
    }
  });

  it('lets retrieval with the org see every contributor, and no one of the neighbouring org', async () => {
    const answer = await client.retrieve('plain-ascii', STREAM, { query: `${WORD} policy`, org_id: ORG, limit: 100 });
    const seen = new Set(answer.results.map((r) => /number (\d+) /.exec(r.unit.content)?.[1]).filter((x) => x !== undefined).map(Number));
    expect(seen.size).toBe(CONTRIBUTORS.length);
    expect(answer.results.some((r) => r.unit.content.includes('neighbouring'))).toBe(false);
  });
});
