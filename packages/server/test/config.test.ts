import { ConfigError, loadConfig } from '../src/config';
import { shardOf, fnv1a32 } from '../src/shards';

describe('configuration', () => {
  it('has working defaults with no file and no variables', () => {
    const config = loadConfig({ env: {} });
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 3000, body_limit: 2 * 1024 * 1024 });
    expect(config.storage.data_dir).toBe('./data');
    expect(config.raft.auto_initialize).toBe(true);
    expect(config.embedding.provider).toBe('local');
    expect(config.llm.provider).toBe('none');
    expect(config.ingest.max_batch).toBe(1000);
    expect(config.cluster.shards).toBe(1);
  });

  it('applies STRATA__SECTION__KEY with types from the schema, and shortcuts over them', () => {
    const config = loadConfig({
      env: {
        STRATA__RAFT__AUTO_INITIALIZE: 'false', STRATA__SERVER__PORT: '4000', STRATA_PORT: '4001',
        STRATA_PEERS: '1=http://127.0.0.1:3001,2=http://127.0.0.1:3002/', STRATA_NODE_ID: '2', STRATA_CLUSTER_SECRET: 'cluster-secret',
        STRATA__LLM__MODEL: 'gpt-x',
      },
    });
    expect(config.raft.auto_initialize).toBe(false);
    expect(config.server.port).toBe(4001);
    expect(config.cluster.node_id).toBe(2);
    expect(config.cluster.peers).toEqual([{ id: 1, url: 'http://127.0.0.1:3001' }, { id: 2, url: 'http://127.0.0.1:3002' }]);
    expect(config.llm.model).toBe('gpt-x');
  });

  it.each([
    [{ STRATA_PORT: '70000' }, "'server.port' must be <= 65535 (from STRATA_PORT)"],
    [{ STRATA__EMBEDDING__PROVIDER: 'magic' }, "'embedding.provider' must be equal to one of the allowed values (from STRATA__EMBEDDING__PROVIDER)"],
    [{ STRATA__SERVER__NOPE: '1' }, "unknown key 'server.nope' (from STRATA__SERVER__NOPE)"],
    [{ STRATA_PEERS: '1=http://a:1,2=http://b:2', STRATA_NODE_ID: '3', STRATA_CLUSTER_SECRET: 'x'.repeat(10) }, "'cluster.node_id' 3 is not one of the ids"],
    [{ STRATA_PEERS: '1=http://a:1,2=http://b:2' }, "'cluster.secret' (STRATA_CLUSTER_SECRET) is required"],
    [{ STRATA_PEERS: 'one=http://a:1' }, "'cluster.peers.0.id' must be integer"],
  ])('rejects %j naming the key', (env, message) => {
    expect(() => loadConfig({ env })).toThrow(ConfigError);
    expect(() => loadConfig({ env })).toThrow(message);
  });
});

describe('shard routing', () => {
  it('uses FNV-1a 32 over UTF-8, a stable documented hash', () => {
    // Reference values of FNV-1a 32-bit.
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(shardOf('a', 2)).toBe(0xe40c292c % 2);
  });

  it('spreads users over shards', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[shardOf(`user-${i}`, 4)]++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
  });
});
