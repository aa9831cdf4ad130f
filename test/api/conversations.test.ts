/**
 * The conversation suite (scripts/lib/conversations.ts, `npm run eval:conversations`) at fixed floors:
 * realistic chats whose facts change over months, ingested session by session as an agent sends them
 * into a node with the default (local) embedder, then asked what a user would ask. The floors sit a
 * little under what the suite measures (docs/memory-quality.md), so a change that makes memory answer
 * worse, lets small talk back in, leaves more old values current or takes the dates out of the context
 * fails here.
 */
import { resolve } from 'node:path';
import { StrataClient } from '@strata/client';
import { loadSuite, runSuite, type Suite } from '../../scripts/lib/conversations';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'conversations-test-admin-key';
// The suite's figures vary from run to run (top-1 0.476-0.500 and time contexts 56-57 of 99 in eight runs
// of the third round's code; 0.51-0.54, top-3 0.74-0.76 and contexts 52-57 in the fourth round's; 0.553-0.572,
// top-3 0.769-0.779, stale 46-47 and contexts 61-65 in the sixth round's): not from how consolidation's batches split (a batch larger than a round varies as much)
// nor from the reinforcement of earlier questions' results (off, still 11 of 208 ranks move), so from
// near ties in ranking. Each floor sits under the lowest value measured, not under the mean.
const FLOORS = { top1: 0.53, top3: 0.75, fillerShare: 0.02, staleLeftCurrent: 49, timeContextsOk: 58 };

describe('conversation suite', () => {
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' }, timeoutMs: 60_000 });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  }, 90_000);
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it(`answers (top-1 ≥ ${FLOORS.top1}, top-3 ≥ ${FLOORS.top3}), keeps small talk out of L1 and dates the context`, async () => {
    const suite: Suite = { conversations: ['dev.json', 'suite.json'].flatMap((f) => loadSuite(resolve(__dirname, '../conversations', f)).conversations) };
    const s = await runSuite(client, suite, { timeoutMs: 240_000 });
    expect(s.questions).toBe(208);
    const summary = { top1: s.top1, top3: s.top3, filler: s.filler_share, stale: s.stale_left_current, time: s.time_contexts_ok };
    if (s.top1 < FLOORS.top1) console.log(JSON.stringify(summary));
    expect(s.top1).toBeGreaterThanOrEqual(FLOORS.top1);
    expect(s.top3).toBeGreaterThanOrEqual(FLOORS.top3);
    expect(s.filler_share).toBeLessThanOrEqual(FLOORS.fillerShare);
    expect(s.stale_left_current).toBeLessThanOrEqual(FLOORS.staleLeftCurrent);
    expect(s.time_contexts_ok).toBeGreaterThanOrEqual(FLOORS.timeContextsOk);
    // every context of a time question is dated, line by line
    expect(s.results.filter((r) => r.contextDated === false)).toEqual([]);
  }, 400_000);
});
