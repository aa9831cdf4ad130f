/**
 * The stated-fact probes (scripts/lib/probes.ts, `npm run eval:probes`) at a fixed floor: users state
 * persona facts among distractors, then ask about them in other words; the unit made from the stating
 * event (for a corrected fact, from the correction) must come first. A seed of its own, with the
 * default (local) embedder, as `npm start` runs. Measured 1.000 at this seed; before facets and
 * third-person corrections, about 0.55 (docs/retrieval-tuning.md).
 */
import { StrataClient } from '@strata/client';
import { generateProbes } from '../../scripts/lib/probes';
import { runProbes } from '../../scripts/lib/probes-run';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'probes-test-admin-key';
const PRECISION_FLOOR = 0.9;
const MRR_FLOOR = 0.93;

describe('stated-fact probes', () => {
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' }, timeoutMs: 60_000 });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  }, 90_000);
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it(`answers stated facts first (precision@1 ≥ ${PRECISION_FLOOR}, MRR ≥ ${MRR_FLOOR})`, async () => {
    const score = await runProbes(client, generateProbes(101, 10));
    expect(score.questions).toBe(80);
    if (score.precision_at_1 < PRECISION_FLOOR) console.log(JSON.stringify(score.misses, null, 2));
    expect(score.precision_at_1).toBeGreaterThanOrEqual(PRECISION_FLOOR);
    expect(score.mrr).toBeGreaterThanOrEqual(MRR_FLOOR);
  }, 90_000);
});
