/**
 * A write whose leader loses leadership before it commits is answered "not stored" (ProposalDropped →
 * NotStoredError) only once the new leader has committed at its index, that is after an election, and
 * so often after the write's bound for looking for a leader (cluster.forward_timeout_ms, counted from
 * the first attempt) has run out. Both loops that send such a write again, an import's chunk
 * (RemoteGroups.proposeImport) and a forwarded request (Forwarder.route), then gave up with 503 "not
 * stored; retry" just when a leader existed again (issue 25: an import during a leader change stopped
 * after its first chunk). A "not stored" answer now starts the bound afresh (LeaderDeadline).
 *
 * Real Raft replicas (in-process transport, LevelDB storage) and real state machines; the leader is cut
 * off with a proposal in flight, the other two elect and commit, and the cut is healed only once the
 * bound counted from the first attempt has passed: the drop reaches the loop after it, every time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import { LevelStorage, LocalTransportHub, RaftHost, seededRandom } from '@strata/raft';
import { RaftApplier, RaftCommandLog, settle, StateDb, StateMachine, type ExportRecord, type ImportAnswer, type ImportCommand } from '@strata/store';
import { Forwarder, type LeaderView } from '../../src/cluster/forward';
import { LeaderDeadline, MAX_NOT_STORED_RENEWALS } from '../../src/cluster/leader-deadline';
import { PeerSigner } from '../../src/cluster/peer-auth';
import { RemoteGroups } from '../../src/cluster/remote-groups';
import { LineParser } from '../../src/operations/export-lines';

/** cluster.forward_timeout_ms of the loops under test */
const TIMEOUT_MS = 1500;

interface Replica {
  id: number;
  dir: string;
  host: RaftHost;
  storage: LevelStorage;
  db: StateDb;
  log: RaftCommandLog;
}

const hub = new LocalTransportHub();
const replicas = new Map<number, Replica>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for a condition (a step's bound, not an assertion on time). */
async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(5);
  }
}

async function open(id: number): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), `strata-not-stored-${id}-`));
  const storage = await LevelStorage.open(join(dir, 'raft'));
  const host = new RaftHost({
    nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10, random: seededRandom(id),
    // only a drop (or success) ends a proposal here: its own timeout is not what is tested
    group: { proposeTimeoutMs: 120_000 },
  });
  const db = await StateDb.open(join(dir, 'state'));
  const applier = await RaftApplier.open(await StateMachine.open(db));
  const r = { id, dir, host, storage, db, log: new RaftCommandLog(await host.openGroup(0, applier), applier) };
  replicas.set(id, r);
  return r;
}

const leader = () => [...replicas.values()].find((r) => r.log.isLeader());
const others = (id: number) => [...replicas.values()].filter((r) => r.id !== id);

/** Node 1 leads (moved there when the election chose another), and every replica has applied its whole log. */
async function node1Leads(): Promise<void> {
  await until('a leader', () => leader() !== undefined);
  const current = leader()!;
  if (current.id !== 1) await current.log.group.transferLeadership(1);
  const node1 = replicas.get(1)!;
  await until('node 1 leads, its log committed and applied everywhere', () => {
    const s = node1.log.group.status();
    return s.role === 'leader' && s.commitIndex === s.lastIndex && [...replicas.values()].every((r) => r.log.status().applied_index === s.lastIndex);
  });
}

function heal(): void {
  hub.blocked.clear();
}

function cut(id: number): void {
  for (const o of others(id)) {
    hub.blocked.add(`${id}>${o.id}`);
    hub.blocked.add(`${o.id}>${id}`);
  }
}

/** An import chunk of one new event (a line parsed as an import parses it). */
function chunk(n: number): ImportCommand {
  const line = JSON.stringify({
    kind: 'event', event_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, user_id: 'renewal-user', stream_id: '11111111-1111-4111-8111-111111111111',
    content: `chunk ${n}`, content_type: 'text', valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z', consolidation: { state: 'consolidated' },
  });
  const record: ExportRecord = new LineParser().record({ text: line, number: 2 });
  return { type: 'import.records', at: '2026-01-01T00:00:00.000Z', records: [record] };
}

/** What node 1 knows of the group: it reaches no other node itself (no URLs), so it runs writes only as leader. */
const view: LeaderView = {
  nodeId: 1,
  isLeader: () => replicas.get(1)!.log.isLeader(),
  leaderId: () => replicas.get(1)!.log.leaderId(),
  urlOf: () => null,
};

/**
 * Starts `write` on node 1 (its leader) cut off from the others, so its proposal cannot commit; lets the
 * others elect a leader that commits at its index; heals once `write`'s bound counted from the start
 * has passed, so the "not stored" answer reaches the loop after it; then hands leadership back to node 1,
 * where the loop can run the write again. Answers how `write` ended.
 */
async function droppedAfterTheBound<T>(write: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: Error }> {
  await node1Leads();
  const node1 = replicas.get(1)!;
  const index = node1.log.group.status().lastIndex + 1;
  cut(1);
  // Node 1 still leads in this turn of the event loop (no tick can run before the proposal): the write
  // is proposed there, at index last + 1, and cannot reach the others.
  const outcome = write().then((value) => ({ ok: true as const, value }), (error: Error) => ({ ok: false as const, error }));
  const started = Date.now(); // the loop's bound was set before this: it ends by started + TIMEOUT_MS
  let ended = false;
  void outcome.then(() => (ended = true));
  await until('the others elect a leader that commits at the write\'s index', () => others(1).some((r) => r.log.isLeader() && r.log.status().commit_index >= index));
  await until('the bound counted from the first attempt passes', () => Date.now() > started + TIMEOUT_MS);
  expect(ended).toBe(false); // still waiting for its proposal's outcome
  heal();
  // node 1 learns of the new term, drops its entry for the new leader's, and answers "not stored"
  await until('node 1 applies the new leader\'s entry at the write\'s index', () => node1.log.status().applied_index >= index && !node1.log.isLeader());
  // Before the fix the loop gave up here. Now it looks for a leader again, with a bound of its own:
  // node 1 leads again soon (any leader it reaches would do; it reaches none but itself here).
  if (!ended) {
    await until('a leader', () => leader() !== undefined);
    const current = leader()!;
    if (current.id !== 1) await current.log.group.transferLeadership(1);
  }
  return outcome;
}

beforeAll(async () => {
  const [a] = [await open(1), await open(2), await open(3)];
  await a.log.group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
});

afterEach(() => heal());

afterAll(async () => {
  for (const r of replicas.values()) {
    await r.host.close();
    await r.storage.close();
    await r.db.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

describe('a write answered "not stored" after its bound for finding a leader', () => {
  it('an import chunk is proposed again on the next leader, and stored once', async () => {
    const forwarder = new Forwarder({ view, timeoutMs: TIMEOUT_MS });
    const groups = new RemoteGroups({
      view, leaderOf: (shard, deadline) => forwarder.leaderOf(shard, deadline),
      signer: new PeerSigner('not-stored-renewal-secret-0123456789', 1, 60_000), timeoutMs: TIMEOUT_MS, requestTimeoutMs: 10_000, maxLineBytes: 1 << 20,
    });
    const command = chunk(1);
    const node1 = replicas.get(1)!;
    // what importFile proposes for a chunk on a group this node leads
    const outcome = await droppedAfterTheBound(() => groups.proposeImport(0, command, async () => settle(await node1.log.propose(command)) as ImportAnswer));
    if (!outcome.ok) throw outcome.error; // before the fix: 503 "The leader changed before the write committed (it was not stored); retry."
    expect(outcome.value.imported.event).toBe(1);
    expect(groups.notStoredRenewals).toBe(1);
    // stored once: the same chunk again is skipped on the leader
    expect(((await node1.log.propose(command)) as ImportAnswer).skipped.event).toBe(1);
  });

  it('a forwarded write run on this node is run again on the next leader', async () => {
    const forwarder = new Forwarder({ view, timeoutMs: TIMEOUT_MS });
    const command = chunk(2);
    const node1 = replicas.get(1)!;
    let answer: ImportAnswer | null = null;
    // a request without a body (so it can run again), whose route proposes on this node as leader
    const req = { headers: {}, method: 'POST', body: undefined } as unknown as Request;
    const res = { headersSent: false } as unknown as Response;
    const outcome = await droppedAfterTheBound(() => forwarder.route(0, req, res, async () => {
      answer = settle(await node1.log.propose(command)) as ImportAnswer;
    }));
    if (!outcome.ok) throw outcome.error;
    expect(answer).toMatchObject({ imported: { event: 1 } });
    expect(forwarder.notStoredRetries).toBe(1);
  });
});

describe('LeaderDeadline', () => {
  it('starts afresh on a "not stored" answer, at most MAX_NOT_STORED_RENEWALS times', () => {
    const spent = new LeaderDeadline(0);
    expect(spent.passed()).toBe(true);
    for (let i = 0; i < MAX_NOT_STORED_RENEWALS; i++) expect(spent.renew()).toBe(true);
    expect(spent.renew()).toBe(false);
    expect(spent.renewals).toBe(MAX_NOT_STORED_RENEWALS);
    const d = new LeaderDeadline(60_000, 1);
    const at = d.at;
    expect(d.passed()).toBe(false);
    expect(d.renew()).toBe(true);
    expect(d.at).toBeGreaterThanOrEqual(at);
    expect(d.renew()).toBe(false);
  });
});
