/** The pure decisions of cluster mode: who initializes, which shard a request targets, what writes, join checks. */
import { routeWrites, targetShard } from '../../src/cluster/forward';
import { JOIN_NONCE_HEADER, JOIN_SIG_HEADER, JOIN_TS_HEADER, JoinSigner, parseJoin } from '../../src/cluster/membership';
import { seedNodeId, selfUrlOf, startPlan } from '../../src/cluster/runtime';
import { initialGroups, shardOf } from '../../src/shards';

const cfg = (over: { node_id?: number; peers?: { id: number; url: string }[]; join?: string | null; auto?: boolean; seed?: number | null; advertise?: string | null }) => ({
  cluster: {
    node_id: over.node_id ?? 1, peers: over.peers ?? [], secret: 's', shards: 1, forward_timeout_ms: 1000,
    join: over.join ?? null, advertise_url: over.advertise ?? null, peer_clock_skew_s: 30, peer_inflight_bytes: 1 << 27,
    replication_factor: 3, placement_interval_ms: 1000, dead_after_s: 60, max_moves: 2, auto_split_records: 100_000, auto_merge_records: 20_000,
  },
  raft: { auto_initialize: over.auto ?? true, bootstrap_seed_node_id: over.seed ?? null, tick_ms: 50, election_ticks: 10, heartbeat_ticks: 1, max_pending_proposals: 8192, max_pending_bytes: 64 << 20, snapshot_every: 10_000, snapshot_every_bytes: 64 << 20, compaction_margin: 2_000, compaction_margin_bytes: 16 << 20, held_payload_bytes: 8 << 20 },
});
const peers = [{ id: 3, url: 'http://c:3' }, { id: 2, url: 'http://b:2' }, { id: 5, url: 'http://e:5' }];

describe('start plan', () => {
  it('a single node initializes itself; in a cluster only the seed (configured, else lowest id) does', () => {
    expect(startPlan(cfg({}))).toBe('initialize');
    expect(seedNodeId(cfg({ node_id: 3, peers }))).toBe(2);
    expect(startPlan(cfg({ node_id: 2, peers }))).toBe('initialize');
    expect(startPlan(cfg({ node_id: 3, peers }))).toBe('wait');
    expect(startPlan(cfg({ node_id: 5, peers, seed: 5 }))).toBe('initialize');
    expect(startPlan(cfg({ node_id: 2, peers, auto: false }))).toBe('wait');
    expect(startPlan(cfg({ node_id: 7, join: 'http://b:2' }))).toBe('join');
  });

  it('the own URL comes from advertise_url, else the peer list, else loopback and the port', () => {
    expect(selfUrlOf(cfg({ node_id: 3, peers }), 9)).toBe('http://c:3');
    expect(selfUrlOf(cfg({ node_id: 3, peers, advertise: 'http://x:1/' }), 9)).toBe('http://x:1');
    expect(selfUrlOf(cfg({}), 4321)).toBe('http://127.0.0.1:4321');
  });
});

describe('forwarding decisions', () => {
  it('every method but GET writes unless the route says otherwise', () => {
    expect(routeWrites({ method: 'post' })).toBe(true);
    expect(routeWrites({ method: 'delete' })).toBe(true);
    expect(routeWrites({ method: 'get' })).toBe(false);
    expect(routeWrites({ method: 'post', writes: false })).toBe(false);
  });

  it('targets the :user_id shard, else body.user_id, else shard 0', () => {
    const groups = initialGroups(4);
    expect(targetShard({ user_id: 'alice' }, { user_id: 'bob' }, groups)).toBe(shardOf('alice', 4));
    expect(targetShard({}, { user_id: 'bob' }, groups)).toBe(shardOf('bob', 4));
    expect(targetShard({}, { name: 'key' }, groups)).toBe(0);
    expect(targetShard({}, null, groups)).toBe(0);
  });
});

describe('join requests', () => {
  it('validates node_id and address, naming the fields', () => {
    expect(parseJoin({ node_id: 4, address: 'http://h:1/' })).toEqual({ node_id: 4, address: 'http://h:1' });
    expect(() => parseJoin({ node_id: 0, address: 'ftp://x' })).toThrow(expect.objectContaining({ status: 400, details: [expect.objectContaining({ path: '/node_id' }), expect.objectContaining({ path: '/address' })] }));
  });

  it('accepts a join signed with the cluster secret once, within the clock skew only', () => {
    let now = 1_000_000;
    const clock = () => now;
    const input = { node_id: 4, address: 'http://h:1' };
    const signer = new JoinSigner('secret', 30_000, clock);
    const parts = (h: Record<string, string>) => ({ sig: h[JOIN_SIG_HEADER], ts: h[JOIN_TS_HEADER], nonce: h[JOIN_NONCE_HEADER] });
    const fresh = () => new JoinSigner('secret', 30_000, clock);
    const a = parts(signer.sign(input));
    expect(fresh().verify({ node_id: 5, address: 'http://h:1' }, a)).toBe(false); // other body
    expect(new JoinSigner('other', 30_000, clock).verify(input, a)).toBe(false);
    expect(new JoinSigner(null, 30_000, clock).verify(input, a)).toBe(false);
    expect(fresh().verify(input, { ...a, nonce: a.nonce.replace(/\.1$/, '.2') })).toBe(false); // the nonce is signed
    const verifier = fresh();
    now += 1000;
    expect(verifier.verify(input, a)).toBe(true);
    expect(verifier.verify(input, a)).toBe(false); // single-use
    expect(verifier.verify(input, parts(signer.sign(input)))).toBe(true); // a new signature is fine
    const late = parts(signer.sign(input));
    now += 31_000;
    expect(verifier.verify(input, late)).toBe(false); // beyond the skew
  });
});
