/** The Raft paper's rules, each as a test against the pure core. */
import { MsgType, type Message } from '../src/core/types';
import { ConfChangeError, NotLeaderError } from '../src/errors';
import { Cluster, enc } from './harness';

describe('leader election', () => {
  test('a single-node group elects itself and commits its no-op', () => {
    const c = new Cluster([1]);
    c.tickAll(25);
    const n = c.node(1);
    expect(n.role).toBe('leader');
    expect(n.log.committed).toBe(2); // bootstrap conf entry + no-op
  });

  test('three nodes elect exactly one leader per term (election safety)', () => {
    const c = new Cluster([1, 2, 3]);
    c.tickAll(40);
    const leaders = c.leaders();
    expect(leaders).toHaveLength(1);
    for (const id of [1, 2, 3]) expect(c.node(id).lead).toBe(leaders[0].id);
  });

  test('a node votes at most once per term', () => {
    const c = new Cluster([1, 2, 3], { preVote: false, checkQuorum: false });
    const vote = (from: number, to: number, term: number): Message => ({ type: MsgType.Vote, from, to, term, index: 1, logTerm: 1 });
    c.node(3).step(vote(1, 3, 5));
    c.node(3).step(vote(2, 3, 5));
    c.persistAll();
    const answers = c.queue.filter((m) => m.type === MsgType.VoteResp && m.from === 3);
    expect(answers.map((m) => [m.to, m.reject])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(c.disks.get(3)?.hardState).toMatchObject({ term: 5, vote: 1 });
  });

  test('a candidate with a less up-to-date log is refused (leader completeness)', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    c.isolate(3);
    c.node(1).propose(enc('x'));
    c.stabilize();
    c.heal();
    c.node(3).campaign();
    c.tickAll(0);
    c.stabilize();
    expect(c.node(3).role).not.toBe('leader');
  });

  test('PreVote: a partitioned node does not raise its term and does not disrupt the leader on return', () => {
    const c = new Cluster([1, 2, 3]);
    const l = c.elect(1);
    const term = l.term;
    c.isolate(3);
    for (let i = 0; i < 100; i++) {
      c.node(3).tick();
      c.node(1).tick();
      c.node(2).tick();
      c.stabilize();
    }
    expect(c.node(3).term).toBe(term);
    c.heal();
    c.tickAll(5);
    expect(c.node(1).role).toBe('leader');
    expect(c.node(1).term).toBe(term);
  });

  test('CheckQuorum: an isolated leader steps down; followers that hear a live leader ignore vote requests', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    // Follower 2 heard the leader just now: a vote request of a higher term is ignored.
    c.node(2).step({ type: MsgType.Vote, from: 3, to: 2, term: c.node(2).term + 5, index: 99, logTerm: 99 });
    c.persistAll();
    expect(c.queue.filter((m) => m.from === 2 && m.type === MsgType.VoteResp)).toHaveLength(0);
    expect(c.node(2).term).toBe(c.node(1).term);
    c.isolate(1);
    c.tickAll(10);
    expect(c.node(1).role).toBe('leader'); // still within the first check window
    c.tickAll(11);
    expect(c.node(1).role).toBe('follower');
  });
});

describe('log replication', () => {
  test('entries commit on a majority and apply in order on every node', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    for (let i = 0; i < 10; i++) c.node(1).propose(enc(`e${i}`));
    c.stabilize();
    c.tickAll(2);
    for (const id of [1, 2, 3]) expect(c.appliedData(id)).toEqual([...Array(10).keys()].map((i) => `e${i}`));
  });

  test('log matching: a follower with conflicting entries is repaired, with few round trips (conflict hints)', () => {
    const c = new Cluster([1, 2, 3], { maxEntriesPerMsg: 1000 });
    c.elect(1);
    // Leader 1 appends 50 entries that reach nobody, then loses leadership.
    c.isolate(1);
    for (let i = 0; i < 50; i++) c.node(1).propose(enc(`lost${i}`));
    c.stabilize();
    c.crash(1);
    c.heal();
    c.elect(2);
    for (let i = 0; i < 50; i++) c.node(2).propose(enc(`kept${i}`));
    c.stabilize();
    const before = c.sent.length;
    c.start(1);
    c.tickAll(3);
    const rejects = c.sent.slice(before).filter((m) => m.type === MsgType.AppResp && m.reject && m.from === 1);
    expect(rejects.length).toBeLessThanOrEqual(2);
    expect(c.node(1).log.lastIndex()).toBe(c.node(2).log.lastIndex());
    for (let i = 1; i <= c.node(2).log.lastIndex(); i++) expect(c.node(1).log.term(i)).toBe(c.node(2).log.term(i));
    expect(c.appliedData(1)).toEqual(c.appliedData(2));
    expect(c.appliedData(1).some((s) => s.startsWith('lost'))).toBe(false);
  });

  test('Figure 8 (rule in isolation): replicas of an old-term entry alone do not move commit', () => {
    const c = new Cluster([1, 2, 3], { maxEntriesPerMsg: 1 });
    c.elect(1);
    c.tickAll(2);
    c.isolate(1);
    c.node(1).propose(enc('old'));
    c.stabilize();
    const oldIndex = c.node(1).log.lastIndex();
    const oldTerm = c.node(1).term;
    c.crash(2);
    c.crash(3);
    // Node 1 restarts alone: its log has the old-term entry nobody else has.
    c.crash(1);
    c.start(1);
    c.start(2);
    c.start(3);
    // Let everything through except the new term's no-op (stripped from App messages).
    c.filter = (m) => {
      if (m.type === MsgType.App) m.entries = (m.entries ?? []).filter((e) => e.term <= oldTerm);
      return true;
    };
    c.node(1).campaign();
    c.stabilize();
    const l = c.node(1);
    expect(l.role).toBe('leader');
    expect(c.node(2).log.term(oldIndex)).toBe(oldTerm); // replicated to a majority...
    expect(l.log.committed).toBeLessThan(oldIndex); // ...yet not committed
    c.filter = () => true;
    c.tickAll(5);
    expect(l.log.committed).toBeGreaterThan(oldIndex);
    expect(c.appliedData(2)).toContain('old');
  });

  test('stale, duplicated and reordered messages change nothing', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    const recorded: Message[] = [];
    c.filter = (m) => {
      recorded.push(m);
      return true;
    };
    for (let i = 0; i < 5; i++) {
      c.node(1).propose(enc(`a${i}`));
      c.stabilize();
    }
    c.tickAll(2);
    const snapshotOf = (id: number) => JSON.stringify({ last: c.node(id).log.lastIndex(), commit: c.node(id).log.committed, term: c.node(id).term });
    const before = [1, 2, 3].map(snapshotOf);
    // Replay everything, reversed, twice.
    for (const m of [...recorded].reverse().concat(recorded)) c.nodes.get(m.to)?.step(m);
    c.filter = () => true;
    c.stabilize();
    expect([1, 2, 3].map(snapshotOf)).toEqual(before);
    expect(c.appliedData(2)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    // A message from an old term is answered with the current term and otherwise ignored.
    c.crash(1);
    c.tickAll(30);
    const newLeader = c.leaders()[0];
    expect(newLeader.id).not.toBe(1);
    const stale = recorded.find((m) => m.type === MsgType.App && m.to === newLeader.id) as Message;
    newLeader.step(stale);
    expect(newLeader.role).toBe('leader');
  });

  test('a leader crash in the middle of replication loses only uncommitted entries', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    c.node(1).propose(enc('committed'));
    c.stabilize();
    c.tickAll(1);
    // The next entry reaches node 2 only, and nobody learns it is committed.
    c.filter = (m) => !(m.from === 1 && m.to === 3) && !(m.type === MsgType.AppResp);
    c.node(1).propose(enc('maybe'));
    c.stabilize();
    c.crash(1);
    c.heal();
    c.tickAll(40);
    const l = c.leaders()[0];
    expect([2, 3]).toContain(l.id);
    c.start(1);
    c.tickAll(5);
    const a2 = c.appliedData(2);
    expect(c.appliedData(1)).toEqual(a2);
    expect(c.appliedData(3)).toEqual(a2);
    expect(a2[0]).toBe('committed');
    // 'maybe' survives only if the new leader had it (node 2) — either way every node agrees.
    if (l.id === 2) expect(a2).toContain('maybe');
  });
});

describe('snapshots', () => {
  test('a lagging follower is repaired by a chunked snapshot that carries the membership', () => {
    const c = new Cluster([1, 2, 3], { snapshotChunkSize: 7 });
    c.elect(1);
    c.isolate(3);
    for (let i = 0; i < 30; i++) c.node(1).propose(enc(`s${i}`));
    c.stabilize();
    c.tickAll(1);
    c.snapshot(1);
    expect(c.node(1).log.offset).toBeGreaterThan(20);
    c.heal();
    c.tickAll(30);
    const chunks = c.sent.filter((m) => m.type === MsgType.Snap && m.to === 3);
    expect(chunks.length).toBeGreaterThan(3);
    expect(c.node(3).log.lastIndex()).toBe(c.node(1).log.lastIndex());
    expect(c.node(3).conf.voters).toEqual([1, 2, 3]);
    expect(c.appliedData(3)).toEqual(c.appliedData(1));
    // and it keeps replicating normally afterwards
    c.node(1).propose(enc('after'));
    c.stabilize();
    c.tickAll(1);
    expect(c.appliedData(3).at(-1)).toBe('after');
  });

  test('a node restarts from its snapshot and replays the committed tail', () => {
    const c = new Cluster([1]);
    c.elect(1);
    for (let i = 0; i < 5; i++) c.node(1).propose(enc(`r${i}`));
    c.stabilize();
    c.snapshot(1, 3);
    c.node(1).propose(enc('tail'));
    c.stabilize();
    c.crash(1);
    c.appliedIndex.set(1, 4); // the application had applied up to 4 before the crash
    c.applied.set(1, []);
    c.start(1);
    c.stabilize();
    expect(c.applied.get(1)?.[0].index).toBe(5);
    expect(c.appliedData(1).at(-1)).toBe('tail');
  });
});

describe('reads, transfer and membership', () => {
  test('ReadIndex confirms leadership with a majority before answering; a cut-off leader never answers', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    c.node(1).readIndex(42);
    c.stabilize();
    expect(c.readStates.get(1)).toEqual([{ ctx: 42, index: c.node(1).log.committed }]);
    // a follower forwards its read to the leader
    c.node(2).readIndex(7);
    c.stabilize();
    expect(c.readStates.get(2)).toEqual([{ ctx: 7, index: c.node(1).log.committed }]);
    c.isolate(1);
    c.node(1).readIndex(43);
    c.stabilize();
    expect(c.readStates.get(1)).toHaveLength(1);
  });

  test('leadership transfer hands over to the target', () => {
    const c = new Cluster([1, 2, 3]);
    c.elect(1);
    c.node(1).propose(enc('x'));
    c.node(1).transferLeadership(3);
    expect(() => c.node(1).propose(enc('y'))).toThrow();
    c.stabilize();
    expect(c.node(3).role).toBe('leader');
    expect(c.node(1).role).toBe('follower');
    expect(() => c.node(1).propose(enc('z'))).toThrow(NotLeaderError);
  });

  test('a node joins as a learner, catches up, becomes a voter; one change at a time', () => {
    const c = new Cluster([1, 2, 3]);
    c.node(1).campaign();
    for (let i = 0; i < 6; i++) c.deliverOnly((m) => m.type !== MsgType.App);
    const l = c.node(1);
    expect(l.role).toBe('leader');
    expect(() => l.proposeConfChange({ type: 'add_learner', node: 4, addr: 'http://x' })).toThrow(ConfChangeError); // no entry of its term committed yet
    c.tickAll(1);
    c.start(4);
    l.proposeConfChange({ type: 'add_learner', node: 4, addr: 'http://x' });
    expect(() => l.proposeConfChange({ type: 'remove', node: 2 })).toThrow(/in progress/);
    expect(l.conf.learners).toEqual([4]);
    c.tickAll(3);
    expect(c.node(4).log.lastIndex()).toBe(l.log.lastIndex());
    expect(c.node(4).conf.addrs[4]).toBe('http://x');
    // a learner never campaigns
    c.node(4).campaign();
    expect(c.node(4).role).toBe('follower');
    l.proposeConfChange({ type: 'promote', node: 4 });
    c.tickAll(3);
    expect(l.conf.voters).toEqual([1, 2, 3, 4]);
    expect(c.node(4).conf.voters).toEqual([1, 2, 3, 4]);
    // removing the leader: it leads until the change commits, then hands over
    l.proposeConfChange({ type: 'remove', node: 1 });
    c.tickAll(30);
    const nl = c.leaders();
    expect(nl).toHaveLength(1);
    expect(nl[0].id).not.toBe(1);
    expect(nl[0].conf.voters).toEqual([2, 3, 4]);
  });

  test('a refused membership change says why in a typed reason, retryable only when waiting can help', () => {
    const c = new Cluster([1, 2, 3]);
    c.node(1).campaign();
    for (let i = 0; i < 6; i++) c.deliverOnly((m) => m.type !== MsgType.App);
    const l = c.node(1);
    const refusal = (f: () => void): ConfChangeError => {
      try {
        f();
      } catch (e) {
        if (e instanceof ConfChangeError) return e;
      }
      throw new Error('no ConfChangeError');
    };
    const early = refusal(() => l.proposeConfChange({ type: 'add_learner', node: 4, addr: 'http://x' }));
    expect([early.reason, early.retryable]).toEqual(['not_ready', true]);
    c.tickAll(1);
    l.proposeConfChange({ type: 'add_learner', node: 4, addr: 'http://x' });
    const busy = refusal(() => l.proposeConfChange({ type: 'remove', node: 2 }));
    expect([busy.reason, busy.retryable]).toEqual(['in_progress', true]);
    c.tickAll(3);
    const cases: [() => void, string][] = [
      [() => l.proposeConfChange({ type: 'remove', node: 9 }), 'unknown_node'],
      [() => l.proposeConfChange({ type: 'add_learner', node: 2, addr: 'http://y' }), 'already_member'],
      [() => l.proposeConfChange({ type: 'promote', node: 3 }), 'not_learner'],
      [() => l.transferLeadership(4), 'not_voter'],
    ];
    for (const [f, reason] of cases) {
      const e = refusal(f);
      expect([e.reason, e.retryable]).toEqual([reason, false]);
    }
  });
});
