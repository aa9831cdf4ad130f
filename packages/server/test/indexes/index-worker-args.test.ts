/**
 * The index worker keeps the node's --cpu-prof flags (a worker given its own execArgv, as it is when the
 * node runs its TypeScript sources, would otherwise not be profiled: `bench:retrieval --http --cpu-prof-dir`).
 */
import { profilingArgs } from '../../src/indexes/worker/index-worker';

describe('the index worker\'s profiling flags', () => {
  it('keeps --cpu-prof and its options with their values, and nothing else', () => {
    expect(profilingArgs(['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--conditions=strata-source', '--import', 'tsx'])).toEqual(['--cpu-prof', '--cpu-prof-dir', '/tmp/p']);
    expect(profilingArgs(['--cpu-prof-dir=/tmp/p', '--cpu-prof', '--cpu-prof-interval', '500', '--expose-gc'])).toEqual(['--cpu-prof-dir=/tmp/p', '--cpu-prof', '--cpu-prof-interval', '500']);
    expect(profilingArgs(['--conditions=strata-source', '--import', 'tsx'])).toEqual([]);
  });
});
