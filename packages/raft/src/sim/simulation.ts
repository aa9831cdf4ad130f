/**
 * The deterministic simulator: virtual clock, seeded random, a network that drops, delays, duplicates
 * and reorders, partitions (also one-way), crashes and restarts that lose unsynced writes, snapshots,
 * membership changes under faults, and clients of a KV machine. Safety invariants are checked after
 * every step; the client history is checked for linearizability at the end; after the faults stop
 * the group must settle on one leader and serve again.
 */
import { InvariantError } from '../core/assert';
import { MsgType, type ConfState, type Entry, type Message, type Ready } from '../core/types';
import { ConfChangeError, NotLeaderError, RaftError } from '../errors';
import { encodeCmd, kvModel, type KvInput } from './kv';
import { LogMatching, sameBytes } from './log-matching';
import { NO_NODE_FAULTS, SimNode, type SimNodeFaults } from './node';
import { checkOperations, type Operation } from './porcupine';
import { Rng } from './rng';

export interface SimOptions {
  seed: number;
  steps: number;
  /** turn faults off to measure the happy path */
  faults?: boolean;
  /** initial voters (default: 3 or 5, drawn from the seed) */
  voters?: number;
  /** which faults are weighted up (default: classic) */
  profile?: FaultProfile;
}

/**
 * Fault profiles. `classic` is the original mix, and keeps its exact random draws so old seeds replay.
 * The others weight up the places where bugs hide: `churn` crashes and cuts off leaders just after
 * they win (the Figure 8 shape: entries of an old term replicated by a new leader that dies before its
 * own entry spreads), with slow disks and single-entry Apps; `membership` proposes changes often and
 * meets each with a one-way partition of the leader and crashes of nodes whose write is in flight;
 * `lossy` loses, duplicates and reorders many messages; `reads` cuts an established leader off from
 * its group (not from its clients) while half the clients keep reading from it and the others write
 * through the new leader: the window in which a deposed leader that has not yet noticed could serve a
 * stale read. All but `classic` also let a node's applies lag its syncs (the driver's pipelined apply):
 * later Readys are persisted and acknowledged while earlier ones are still being applied.
 */
export type FaultProfile = 'classic' | 'churn' | 'membership' | 'lossy' | 'reads';
export const FAULT_PROFILES: FaultProfile[] = ['classic', 'churn', 'membership', 'lossy', 'reads'];

interface FaultRates {
  crash: number;
  partition: number;
  oneWay: number;
  heal: number;
  /** membership change attempts per step while faults are on */
  conf: number;
  maxDrop: number;
  maxDup: number;
  /** per step: crash a node whose Ready is being written (its unsynced write is lost) */
  crashWriting: number;
  /** after a new leader or a proposed membership change: chance of a targeted fault a few steps later */
  storm: number;
  /** steps a crashed node stays down, at most */
  maxDowntime: number;
  /** after a new leader: chance to isolate it from the group 15-60 steps later, once it has served */
  isolateLater: number;
  /** clients (of 4) that stay with the node they believe leads and mostly read from it */
  stickyReaders: number;
  node: SimNodeFaults;
}

const RATES: Record<FaultProfile, FaultRates> = {
  classic: { crash: 0.006, partition: 0.005, oneWay: 0.3, heal: 0.01, conf: 0.01, maxDrop: 0.2, maxDup: 0.1, crashWriting: 0, storm: 0, maxDowntime: 150, isolateLater: 0, stickyReaders: 0, node: NO_NODE_FAULTS },
  churn: { crash: 0.004, partition: 0.004, oneWay: 0.5, heal: 0.015, conf: 0.01, maxDrop: 0.3, maxDup: 0.1, crashWriting: 0.004, storm: 0.8, maxDowntime: 40, isolateLater: 0, stickyReaders: 0, node: { singleEntryApps: 0.5, slowWrite: 0.15, lagApply: 0.3 } },
  membership: { crash: 0.004, partition: 0.005, oneWay: 0.6, heal: 0.012, conf: 0.04, maxDrop: 0.2, maxDup: 0.1, crashWriting: 0.004, storm: 0.6, maxDowntime: 80, isolateLater: 0, stickyReaders: 0, node: { singleEntryApps: 0.3, slowWrite: 0.1, lagApply: 0.2 } },
  lossy: { crash: 0.003, partition: 0.003, oneWay: 0.3, heal: 0.01, conf: 0.01, maxDrop: 0.45, maxDup: 0.3, crashWriting: 0.002, storm: 0, maxDowntime: 150, isolateLater: 0, stickyReaders: 0, node: { singleEntryApps: 0.2, slowWrite: 0.05, lagApply: 0.2 } },
  reads: { crash: 0.002, partition: 0.002, oneWay: 0.3, heal: 0.008, conf: 0.005, maxDrop: 0.1, maxDup: 0.05, crashWriting: 0, storm: 0, maxDowntime: 60, isolateLater: 0.7, stickyReaders: 2, node: { singleEntryApps: 0, slowWrite: 0, lagApply: 0.3 } },
};

/**
 * The options of one seed of a mixed hunt: profile and voter count derived from the seed alone, so a
 * seed printed by a violation reproduces with the same options on its own.
 */
export function mixedOptions(seed: number, steps: number): SimOptions {
  const r = new Rng(seed ^ 0x5eed5eed);
  return { seed, steps, profile: FAULT_PROFILES[r.int(FAULT_PROFILES.length)], voters: [3, 5, 7][r.int(3)] };
}

interface ScheduledFault {
  at: number;
  kind: 'crash' | 'isolate' | 'isolate_out' | 'crash_writing' | 'pause';
  /** for a pause: how many steps */
  steps?: number;
  node: number;
}

export class SimViolation extends Error {
  override name = 'SimViolation';
  constructor(message: string, readonly step: number, readonly trace: string[]) {
    super(message);
  }
}

export interface SimResult {
  seed: number;
  steps: number;
  ops: { ok: number; failed: number; unknown: number };
  leaderChanges: number;
  snapshotsInstalled: number;
  confChanges: number;
  crashes: number;
  /** client operations whose history passed the linearizability checker */
  linearizableOps: number;
  /** 1 when the checker's search budget ran out (neither passed nor failed) */
  linearizabilityGaveUp: number;
}

interface InFlight {
  at: number;
  msg: Message;
}

interface PendingWrite {
  client: number;
  op: Operation<KvInput, string>;
  node: number;
  index: number;
  term: number;
  deadline: number;
}

interface PendingRead {
  client: number;
  op: Operation<KvInput, string>;
  node: number;
  ctx: number;
  index: number | null;
  deadline: number;
}

const CFG = { electionTick: 10, heartbeatTick: 2, maxInflightMsgs: 4, maxEntriesPerMsg: 8, snapshotChunkSize: 64 };
const TICK_EVERY = 2;
const OP_TIMEOUT = 120;

export class Simulation {
  private readonly rng: Rng;
  private readonly netRng: Rng;
  private now = 0;
  private clock = 0;
  readonly nodes = new Map<number, SimNode>();
  private net: InFlight[] = [];
  /** blocked directed links "a>b" */
  private cut = new Set<string>();
  private dropRate = 0;
  private dupRate = 0;
  private nextId = 1;
  private restartAt = new Map<number, number>();
  private trace: string[] = [];
  private history: Operation<KvInput, string>[] = [];
  private writes: PendingWrite[] = [];
  private reads = new Map<number, PendingRead>();
  private clientBusy = new Map<number, boolean>();
  private clientLeaderHint = new Map<number, number>();
  private nextCtx = 1;
  private valueSeq = 0;
  // invariant state
  private leaderOfTerm = new Map<number, number>();
  private committed = new Map<number, Entry>();
  private maxCommitted = 0;
  private readonly logMatching = new LogMatching();
  private lastHard = new Map<number, { term: number; vote: number }>();
  private wasLeader = new Map<number, number>();
  private stats: SimResult;
  private bootstrappers = new Set<number>();
  private initialConf: ConfState | null = null;
  private faultsEnd: number;
  private healedOkOps = 0;
  private healedAt = Infinity;
  private readonly rates: FaultRates;
  private readonly maxVoters: number;
  private readonly maxNodes: number;
  private scheduled: ScheduledFault[] = [];
  /** node -> step until which its process is paused (no ticks, no disk, no messages: a GC or VM pause) */
  private pausedUntil = new Map<number, number>();
  /** nodes the non-sticky clients cannot reach (they are on the majority's side of an isolation) */
  private clientCut = new Set<number>();
  private lastLeaderSeen = '';
  /** per node: the last in-memory log entry verified by checkMemoryLog (its prefix is unchanged while it is still there) */
  private verified = new Map<number, { index: number; entry: Entry | null }>();
  /** index -> the term of the leader first seen committing it */
  private commitTerm = new Map<number, number>();
  /** per node: the commit index last checked for durability */
  private durableChecked = new Map<number, number>();

  constructor(private readonly opts: SimOptions) {
    const root = new Rng(opts.seed);
    this.rng = root.fork();
    this.netRng = root.fork();
    this.faultsEnd = opts.faults === false ? 0 : Math.floor(opts.steps * 0.7);
    if (this.faultsEnd === 0) this.healedAt = 0;
    this.stats = { seed: opts.seed, steps: opts.steps, ops: { ok: 0, failed: 0, unknown: 0 }, leaderChanges: 0, snapshotsInstalled: 0, confChanges: 0, crashes: 0, linearizableOps: 0, linearizabilityGaveUp: 0 };
    this.rates = RATES[opts.profile ?? 'classic'];
    const drawn = this.rng.chance(0.5) ? 3 : 5;
    const n = opts.voters ?? drawn;
    if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`voters must be 1..9, got ${n}`);
    this.maxVoters = Math.max(5, n);
    this.maxNodes = Math.max(12, n + 7);
    const voters: number[] = [];
    for (let i = 0; i < n; i++) voters.push(this.addNode().id);
    const conf = { voters, learners: [], addrs: Object.fromEntries(voters.map((v) => [v, `sim://${v}`])) };
    // Either every initial member bootstraps, or only the seed and the others wait to be reached.
    const all = this.rng.chance(0.5);
    this.initialConf = conf;
    for (const v of voters) {
      const node = this.nodes.get(v) as SimNode;
      node.start();
      if (all || v === voters[0]) {
        this.bootstrappers.add(v);
        node.core?.bootstrap(conf);
      }
    }
    for (let c = 1; c <= 4; c++) this.clientBusy.set(c, false);
    this.log(`start: ${n} voters ${voters.join(',')}, ${all ? 'all bootstrap' : 'seed bootstraps'}, profile ${opts.profile ?? 'classic'}`);
  }

  private addNode(): SimNode {
    const id = this.nextId++;
    const rng = this.rng.fork();
    const node = new SimNode(id, rng, {
      send: (m) => this.send(m),
      persisted: (nd, r) => this.onPersisted(nd, r),
      applied: (nd, e) => this.onApplied(nd, e),
      readState: (nd, ctx, index) => this.onReadState(nd, ctx, index),
    }, CFG, this.now < this.faultsEnd ? this.rates.node : { ...this.rates.node, slowWrite: 0 });
    this.nodes.set(id, node);
    return node;
  }

  private log(s: string): void {
    this.trace.push(`[${this.now}] ${s}`);
    if (this.trace.length > 400) this.trace.splice(0, 100);
  }

  private fail(msg: string): never {
    throw new SimViolation(`seed ${this.opts.seed} step ${this.now}: ${msg}`, this.now, this.trace.slice(-120));
  }

  run(): SimResult {
    try {
      for (this.now = 0; this.now < this.opts.steps; this.now++) {
        if (this.now === this.faultsEnd && this.faultsEnd > 0) this.heal();
        if (this.now < this.faultsEnd) this.injectFaults();
        this.deliver();
        if (this.now % TICK_EVERY === 0) for (const n of this.nodes.values()) if (!this.paused(n.id)) n.core?.tick();
        for (const n of this.nodes.values()) if (!this.paused(n.id)) n.process(this.now);
        this.clients();
        this.expire();
        // Membership keeps changing after the faults stop, but not in the final stretch that must settle.
        if (this.now > this.faultsEnd && this.now < this.opts.steps - 400 && this.rng.chance(0.004)) this.membershipChange();
        else if (this.now < this.faultsEnd && this.rng.chance(this.rates.conf)) this.membershipChange();
        this.checkSafety();
      }
      this.finishOps();
      this.checkLiveness();
      this.checkLinearizable();
    } catch (e) {
      if (e instanceof SimViolation) throw e;
      if (e instanceof InvariantError || e instanceof Error) this.fail(`exception: ${e.stack ?? e.message}`);
      throw e;
    }
    return this.stats;
  }

  // ------------------------------------------------------------------ network

  private send(m: Message): void {
    const key = `${m.from}>${m.to}`;
    if (this.cut.has(key) || !this.nodes.has(m.to)) return;
    if (this.netRng.chance(this.dropRate)) return;
    const copies = this.netRng.chance(this.dupRate) ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      // Mostly short delays; sometimes long ones, which reorder messages.
      const delay = this.netRng.chance(0.9) ? this.netRng.range(1, 3) : this.netRng.range(4, 25);
      this.net.push({ at: this.now + delay, msg: m });
    }
  }

  private deliver(): void {
    const due: InFlight[] = [];
    const rest: InFlight[] = [];
    for (const f of this.net) (f.at <= this.now ? due : rest).push(f);
    this.net = rest;
    this.netRng.shuffle(due);
    for (const f of due) {
      const msg = f.msg;
      // A paused process reads its socket only when it runs again.
      if (this.paused(msg.to)) {
        this.net.push({ at: this.pausedUntil.get(msg.to) as number, msg });
        continue;
      }
      if (this.cut.has(`${msg.from}>${msg.to}`)) continue;
      const node = this.nodes.get(msg.to);
      if (!node?.core) continue;
      node.core.step(msg);
    }
  }

  // ------------------------------------------------------------------ faults

  private injectFaults(): void {
    const r = this.rng;
    const rates = this.rates;
    if (r.chance(0.01)) {
      this.dropRate = r.chance(0.5) ? 0 : r.next() * rates.maxDrop;
      this.dupRate = r.chance(0.5) ? 0 : r.next() * rates.maxDup;
    }
    const live = [...this.nodes.values()].filter((n) => n.alive);
    if (r.chance(rates.crash) && live.length > 0) this.crash(r.pick(live), '');
    if (rates.crashWriting > 0 && r.chance(rates.crashWriting)) {
      const writing = live.filter((n) => n.writing);
      if (writing.length > 0) this.crash(r.pick(writing), ' (its write in flight is lost)');
    }
    if (rates.storm > 0 || rates.isolateLater > 0) this.stormOnNewLeader();
    this.runScheduled();
    for (const [id, at] of this.restartAt) {
      if (at <= this.now) {
        this.restartAt.delete(id);
        this.restart(id);
      }
    }
    if (r.chance(rates.partition)) {
      const ids = [...this.nodes.keys()];
      r.shuffle(ids);
      const k = r.range(1, Math.max(1, Math.floor(ids.length / 2)));
      this.partition(ids.slice(0, k), ids.slice(k), r.chance(rates.oneWay));
    }
    if (this.cut.size && r.chance(rates.heal)) {
      this.cut.clear();
      this.clientCut.clear();
      this.log('partition healed');
    }
  }

  private crash(n: SimNode, why: string): void {
    n.crash();
    this.stats.crashes++;
    this.failPendingOn(n.id);
    this.restartAt.set(n.id, this.now + this.rng.range(5, this.rates.maxDowntime));
    this.log(`crash node ${n.id}${why}`);
  }

  /** Cuts every link from a to b (and b to a unless one-way). */
  private partition(a: number[], b: number[], oneWay: boolean): void {
    for (const x of a) {
      for (const y of b) {
        this.cut.add(`${x}>${y}`);
        if (!oneWay) this.cut.add(`${y}>${x}`);
      }
    }
    this.log(`partition ${a.join(',')} ${oneWay ? '->|' : '|'} ${b.join(',')}`);
  }

  /** A leader just won: sometimes crash it or cut its outgoing links a few steps later, before its no-op spreads. */
  private stormOnNewLeader(): void {
    const l = this.leader();
    const key = l?.core ? `${l.id}@${l.core.term}` : '';
    if (key === this.lastLeaderSeen) return;
    this.lastLeaderSeen = key;
    if (!l) return;
    if (this.rates.isolateLater > 0 && this.rng.chance(this.rates.isolateLater)) {
      // Cut off and paused past an election timeout: on waking it still believes it leads, while
      // the others have elected a successor (the stale-read window ReadIndex's heartbeat round closes).
      const at = this.now + this.rng.range(15, 60);
      this.scheduled.push({ at, kind: 'isolate', node: l.id });
      if (this.rng.chance(0.7)) this.scheduled.push({ at, kind: 'pause', node: l.id, steps: this.rng.range(20, 80) });
    }
    if (this.rates.storm === 0 || !this.rng.chance(this.rates.storm)) return;
    const x = this.rng.next();
    const kind = x < 0.6 ? 'crash' : x < 0.85 ? 'isolate' : 'isolate_out';
    this.scheduled.push({ at: this.now + this.rng.range(1, 12), kind, node: l.id });
  }

  /** A membership change was proposed: meet it with a one-way cut of the leader and a crash mid-write. */
  private stormOnConfChange(leader: number): void {
    if (this.rates.storm === 0 || this.now >= this.faultsEnd || !this.rng.chance(this.rates.storm)) return;
    this.scheduled.push({ at: this.now + this.rng.range(0, 6), kind: 'isolate_out', node: leader });
    const ids = [...this.nodes.keys()];
    this.scheduled.push({ at: this.now + this.rng.range(1, 15), kind: 'crash_writing', node: this.rng.pick(ids) });
  }

  private runScheduled(): void {
    const due = this.scheduled.filter((f) => f.at <= this.now);
    if (due.length === 0) return;
    this.scheduled = this.scheduled.filter((f) => f.at > this.now);
    for (const f of due) {
      const n = this.nodes.get(f.node);
      if (!n?.alive) continue;
      if (f.kind === 'crash') this.crash(n, ' (targeted)');
      else if (f.kind === 'pause') {
        this.pausedUntil.set(n.id, this.now + (f.steps ?? 1));
        this.log(`pause node ${n.id} for ${f.steps} steps`);
      }
      else if (f.kind === 'crash_writing') {
        const writing = [...this.nodes.values()].filter((x) => x.alive && x.writing);
        if (writing.length > 0) this.crash(this.rng.pick(writing), ' (its write in flight is lost)');
      } else {
        this.partition([n.id], [...this.nodes.keys()].filter((x) => x !== n.id), f.kind === 'isolate_out');
        if (f.kind === 'isolate' && this.rates.stickyReaders > 0) this.cutClientsOff(n.id);
      }
    }
  }

  /** The clients on the majority side lose their connections to an isolated node (sticky readers keep theirs). */
  private cutClientsOff(node: number): void {
    this.clientCut.add(node);
    const stranded = (c: number, n: number) => n === node && c > this.rates.stickyReaders;
    this.writes = this.writes.filter((w) => {
      if (!stranded(w.client, w.node)) return true;
      this.unknown(w.client, w.op);
      return false;
    });
    for (const [ctx, r] of this.reads) {
      if (stranded(r.client, r.node)) {
        this.reads.delete(ctx);
        this.unknown(r.client, r.op);
      }
    }
  }

  private restart(id: number): void {
    const n = this.nodes.get(id) as SimNode;
    if (n.alive) return;
    n.start();
    // Like auto-initialize at start: a bootstrapping node that crashed before its first sync does it again
    // (bootstrap is a no-op on a node that has any state).
    if (this.bootstrappers.has(id) && this.initialConf) n.core?.bootstrap(this.initialConf);
    this.log(`restart node ${id} (disk last ${n.disk.lastIndex()}, term ${n.disk.hardState.term}, applied ${n.sm.applied})`);
  }

  private paused(id: number): boolean {
    const until = this.pausedUntil.get(id);
    if (until === undefined) return false;
    if (until > this.now) return true;
    this.pausedUntil.delete(id);
    return false;
  }

  private heal(): void {
    this.cut.clear();
    this.clientCut.clear();
    this.pausedUntil.clear();
    this.dropRate = 0;
    this.dupRate = 0;
    for (const n of this.nodes.values()) n.calm();
    for (const id of this.restartAt.keys()) this.restart(id);
    this.restartAt.clear();
    for (const n of this.nodes.values()) if (!n.alive) this.restart(n.id);
    this.healedAt = this.now;
    this.log('faults stop: network healed, all nodes up');
  }

  private leader(): SimNode | null {
    let best: SimNode | null = null;
    for (const n of this.nodes.values()) {
      if (n.core?.role === 'leader' && (!best || n.core.term > (best.core?.term ?? 0))) best = n;
    }
    return best;
  }

  private membershipChange(): void {
    const l = this.leader();
    if (!l?.core) return;
    const core = l.core;
    const conf = core.conf;
    const r = this.rng;
    const choice = r.int(3);
    try {
      if (conf.learners.length > 0) {
        const id = conf.learners[0];
        const pr = core.progressOf(id);
        if (pr && pr.match >= core.log.lastIndex() - 5) {
          core.proposeConfChange({ type: 'promote', node: id });
          this.log(`propose promote ${id} at leader ${l.id}`);
          this.stats.confChanges++;
          this.stormOnConfChange(l.id);
        } else if (r.chance(0.1)) {
          core.proposeConfChange({ type: 'remove', node: id });
          this.log(`propose remove learner ${id} at leader ${l.id}`);
          this.stats.confChanges++;
        }
      } else if (choice === 0 && conf.voters.length < this.maxVoters && this.nodes.size < this.maxNodes) {
        const n = this.addNode();
        n.start();
        core.proposeConfChange({ type: 'add_learner', node: n.id, addr: `sim://${n.id}` });
        this.log(`propose add learner ${n.id} at leader ${l.id}`);
        this.stats.confChanges++;
        this.stormOnConfChange(l.id);
      } else if (choice === 1 && conf.voters.length > 3) {
        const victim = r.pick(conf.voters);
        core.proposeConfChange({ type: 'remove', node: victim });
        this.log(`propose remove voter ${victim} at leader ${l.id}`);
        this.stats.confChanges++;
        this.stormOnConfChange(l.id);
      }
    } catch (e) {
      if (!(e instanceof ConfChangeError || e instanceof NotLeaderError || e instanceof RaftError)) throw e;
    }
  }

  // ------------------------------------------------------------------ clients

  private clients(): void {
    for (const [c, busy] of this.clientBusy) {
      if (busy || !this.rng.chance(0.15)) continue;
      const ids = [...this.nodes.keys()];
      const hint = this.clientLeaderHint.get(c);
      // A sticky reader is a client on the old leader's side of a partition: it keeps its leader and mostly reads.
      const sticky = c <= this.rates.stickyReaders;
      let target = hint && this.nodes.has(hint) && (sticky || this.rng.chance(0.8)) ? hint : this.rng.pick(ids);
      if (this.paused(target)) continue; // the request waits in the socket; the client tries again later
      if (!sticky && this.clientCut.has(target)) {
        const reachable = ids.filter((id) => !this.clientCut.has(id));
        if (reachable.length === 0) continue;
        target = this.rng.pick(reachable);
      }
      const node = this.nodes.get(target) as SimNode;
      const key = `k${this.rng.int(3)}`;
      const kind = this.rng.int(10);
      const readBelow = sticky ? 9 : 4;
      const input: KvInput =
        kind < readBelow ? { op: 'get', key } : kind < 7 || sticky ? { op: 'put', key, value: `v${++this.valueSeq}` } : { op: 'append', key, value: `a${++this.valueSeq};` };
      const op: Operation<KvInput, string> = { clientId: c, input, call: ++this.clock };
      if (!node.core) continue;
      try {
        if (input.op === 'get') {
          const ctx = this.nextCtx++;
          if (!node.core.readIndex(ctx)) {
            this.clientLeaderHint.delete(c);
            continue;
          }
          this.reads.set(ctx, { client: c, op, node: target, ctx, index: null, deadline: this.now + OP_TIMEOUT });
        } else {
          const { index, term } = node.core.propose(encodeCmd(input));
          this.writes.push({ client: c, op, node: target, index, term, deadline: this.now + OP_TIMEOUT });
        }
        this.clientBusy.set(c, true);
      } catch (e) {
        if (e instanceof NotLeaderError) {
          if (e.leaderId) this.clientLeaderHint.set(c, e.leaderId);
          else this.clientLeaderHint.delete(c);
          continue; // never entered the log: not part of the history
        }
        if (e instanceof RaftError) continue;
        throw e;
      }
    }
  }

  private complete(client: number, op: Operation<KvInput, string>, output: string | undefined, ok: boolean): void {
    this.clientBusy.set(client, false);
    if (!ok) {
      this.stats.ops.failed++;
      return;
    }
    op.ret = ++this.clock;
    op.output = output;
    this.history.push(op);
    this.stats.ops.ok++;
    if (this.now > this.healedAt + 200) this.healedOkOps++;
  }

  private unknown(client: number, op: Operation<KvInput, string>): void {
    this.clientBusy.set(client, false);
    this.stats.ops.unknown++;
    // A write whose outcome is unknown may take effect later; a read that never answered says nothing.
    if (op.input.op !== 'get') this.history.push(op);
  }

  private failPendingOn(node: number): void {
    this.writes = this.writes.filter((w) => {
      if (w.node !== node) return true;
      this.unknown(w.client, w.op);
      return false;
    });
    for (const [ctx, r] of this.reads) {
      if (r.node === node) {
        this.reads.delete(ctx);
        this.unknown(r.client, r.op);
      }
    }
  }

  private expire(): void {
    this.writes = this.writes.filter((w) => {
      if (w.deadline > this.now) return true;
      this.unknown(w.client, w.op);
      return false;
    });
    for (const [ctx, r] of this.reads) {
      const node = this.nodes.get(r.node) as SimNode;
      if (r.index !== null && node.sm.applied >= r.index) {
        this.reads.delete(ctx);
        this.complete(r.client, r.op, this.readValue(node, r), true);
      } else if (r.deadline <= this.now) {
        this.reads.delete(ctx);
        this.unknown(r.client, r.op);
      }
    }
  }

  private readValue(node: SimNode, r: PendingRead): string {
    return node.sm.get(r.op.input.key);
  }

  private finishOps(): void {
    for (const w of this.writes) this.unknown(w.client, w.op);
    this.writes = [];
    for (const r of this.reads.values()) this.unknown(r.client, r.op);
    this.reads.clear();
  }

  private onReadState(node: SimNode, ctx: number, index: number): void {
    const r = this.reads.get(ctx);
    if (!r || r.node !== node.id) return;
    r.index = index;
    if (node.sm.applied >= index) {
      this.reads.delete(ctx);
      this.complete(r.client, r.op, this.readValue(node, r), true);
    }
  }

  private onApplied(node: SimNode, e: Entry): void {
    // State machine safety: every node applies the same entry at an index.
    const c = this.committed.get(e.index);
    if (c) {
      if (c.term !== e.term || !sameBytes(c.data, e.data)) {
        this.fail(`state machine safety: node ${node.id} applied ${e.index}@${e.term}, committed is ${c.index}@${c.term}`);
      }
    } else {
      this.committed.set(e.index, e);
      this.maxCommitted = Math.max(this.maxCommitted, e.index);
    }
    this.writes = this.writes.filter((w) => {
      if (w.node !== node.id || w.index !== e.index) return true;
      if (w.term === e.term) this.complete(w.client, w.op, undefined, true);
      else this.complete(w.client, w.op, undefined, false); // its slot holds another entry: never committed
      return false;
    });
  }

  // ------------------------------------------------------------------ invariants

  private onPersisted(node: SimNode, r: Ready): void {
    const id = node.id;
    if (r.hardState) {
      const prev = this.lastHard.get(id);
      const hs = r.hardState;
      if (prev) {
        if (hs.term < prev.term) this.fail(`node ${id} persisted term ${hs.term} after ${prev.term}`);
        if (hs.term === prev.term && prev.vote !== 0 && hs.vote !== prev.vote) this.fail(`node ${id} voted twice in term ${hs.term}: ${prev.vote} then ${hs.vote}`);
      }
      this.lastHard.set(id, { term: hs.term, vote: hs.vote });
    }
    if (r.snapshot) {
      this.stats.snapshotsInstalled++;
      const s = r.snapshot.meta;
      const c = this.committed.get(s.index);
      if (c && c.term !== s.term) this.fail(`node ${id} installed snapshot ${s.index}@${s.term}, committed is @${c.term}`);
      this.log(`node ${id} installs snapshot at ${s.index}@${s.term}`);
    }
    const v = this.logMatching.checkWrite(id, node.disk, r.entries);
    if (v) this.fail(v);
  }

  /**
   * The in-memory log of a node: terms never go down along it and it agrees with every other log
   * (log matching). Only entries after the last verified one are checked: while that entry object is
   * still at its index, nothing before it changed (truncation removes suffixes, compaction prefixes).
   */
  private checkMemoryLog(n: SimNode): void {
    const log = (n.core as NonNullable<SimNode['core']>).log;
    const v = this.verified.get(n.id);
    const unchanged = v !== undefined && v.entry !== null && log.entry(v.index) === v.entry;
    const from = unchanged ? v.index + 1 : log.offset + 1;
    let prevTerm = log.term(from - 1);
    for (let i = from; i <= log.lastIndex(); i++) {
      const e = log.entry(i) as Entry;
      const violation = this.logMatching.check(n.id, 'memory', e, prevTerm);
      if (violation) this.fail(violation);
      prevTerm = e.term;
    }
    const last = log.lastIndex();
    this.verified.set(n.id, { index: last, entry: log.entry(last) ?? null });
  }

  /**
   * Durability: an entry a leader counts as committed is on the disks of enough voters of its
   * configuration that every quorum holds it (a majority for an odd group), so no crash of any
   * minority and no election can lose it. Checked each time a leader's commit index moves, and for
   * the highest committed entry every step (a later truncation or lost write would show there).
   */
  private checkDurable(leader: SimNode, index: number, what: string): void {
    const core = leader.core as NonNullable<SimNode['core']>;
    const voters = core.conf.voters;
    const term = this.committed.get(index)?.term ?? core.log.term(index);
    if (term === undefined) return;
    let holders = 0;
    for (const v of voters) {
      const disk = this.nodes.get(v)?.disk;
      if (!disk) continue;
      // A snapshot at or past the index holds it in the state it captured.
      if (disk.offset >= index || disk.termAt(index) === term) holders++;
    }
    const quorum = Math.floor(voters.length / 2) + 1;
    if (holders < voters.length - quorum + 1) {
      this.fail(`durability: ${what} ${index}@${term} is on the disks of ${holders} of voters ${voters.join(',')} (leader ${leader.id}, term ${core.term}): a quorum without it exists`);
    }
  }

  private checkSafety(): void {
    for (const n of this.nodes.values()) {
      const core = n.core;
      if (!core) continue;
      if (core.role === 'leader') {
        // Election safety: one leader per term.
        const other = this.leaderOfTerm.get(core.term);
        if (other !== undefined && other !== n.id) this.fail(`election safety: nodes ${other} and ${n.id} both lead term ${core.term}`);
        if (other === undefined) {
          this.leaderOfTerm.set(core.term, n.id);
          this.stats.leaderChanges++;
          this.log(`node ${n.id} leads term ${core.term} (last ${core.log.lastIndex()}, commit ${core.log.committed})`);
        }
        if (this.wasLeader.get(n.id) !== core.term) {
          this.wasLeader.set(n.id, core.term);
          // Leader completeness: a leader of term T holds every entry committed in a term before T.
          // Not those committed in later terms: a candidate paused mid-election can win term T from
          // votes granted before the pause, after a leader of a higher term committed more (a leader
          // deposed before it knows; it can commit nothing). Seed 1060325 (reads, 7 voters).
          const before = (i: number, c: Entry) => (this.commitTerm.get(i) ?? c.term) < core.term;
          for (let i = Math.max(core.log.offset + 1, 1); i <= this.maxCommitted; i++) {
            const c = this.committed.get(i);
            if (c && before(i, c) && core.log.term(i) !== c.term) this.fail(`leader completeness: leader ${n.id} of term ${core.term} has ${i}@${core.log.term(i)}, committed ${i}@${c.term}`);
          }
          if (core.log.offset > 0) {
            const c = this.committed.get(core.log.offset);
            if (c && before(core.log.offset, c) && c.term !== core.log.offsetTerm) this.fail(`leader completeness: leader ${n.id} compacted ${core.log.offset}@${core.log.offsetTerm}, committed @${c.term}`);
          }
        }
      }
      // Committed entries agree with what was committed anywhere.
      const from = Math.max(core.log.offset + 1, core.log.committed - 3);
      for (let i = from; i <= core.log.committed; i++) {
        const e = core.log.entry(i);
        const c = this.committed.get(i);
        if (e && c && (e.term !== c.term || !sameBytes(e.data, c.data))) {
          this.fail(`node ${n.id} has committed ${i}@${e.term} but ${i}@${c.term} was committed`);
        }
      }
      if (core.applied > core.log.committed) this.fail(`node ${n.id} applied ${core.applied} beyond commit ${core.log.committed}`);
      this.checkMemoryLog(n);
      if (core.role === 'leader' && core.log.committed > (this.durableChecked.get(n.id) ?? 0)) {
        // The term an entry became committed in: that of the first leader seen counting it (a leader
        // commits before any follower can learn it, and this check runs at the end of every step).
        for (let i = (this.durableChecked.get(n.id) ?? 0) + 1; i <= core.log.committed; i++) if (!this.commitTerm.has(i)) this.commitTerm.set(i, core.term);
        this.durableChecked.set(n.id, core.log.committed);
        this.checkDurable(n, core.log.committed, 'commit index');
      }
    }
    const l = this.leader();
    if (l && this.maxCommitted > 0) this.checkDurable(l, this.maxCommitted, 'committed entry');
  }

  private checkLiveness(): void {
    if (this.opts.steps < 600) return;
    const l = this.leader();
    if (!l?.core) this.fail('liveness: no leader after the faults stopped');
    const conf = l.core.conf;
    for (const v of conf.voters) {
      const n = this.nodes.get(v);
      if (!n?.core) this.fail(`liveness: voter ${v} is down after healing`);
      if (n.core.term !== l.core.term || n.core.lead !== l.id) {
        this.fail(`liveness: voter ${v} is at term ${n.core.term} following ${n.core.lead}, leader ${l.id} at term ${l.core.term}`);
      }
    }
    if (this.healedOkOps === 0) this.fail('liveness: no client operation succeeded after the faults stopped');
  }

  private checkLinearizable(): void {
    const res = checkOperations(kvModel, this.history);
    if (res.ok === true) this.stats.linearizableOps = this.history.length;
    if (res.ok === 'unknown') this.stats.linearizabilityGaveUp = 1;
    if (res.ok === false) {
      const part = kvModel.partition ? kvModel.partition(this.history)[res.partition] : this.history;
      const lines = part.slice(-40).map((o) => `  client ${o.clientId} ${JSON.stringify(o.input)} call ${o.call} ret ${o.ret ?? '?'} -> ${o.output ?? ''}`);
      this.trace.push('history of the failing key (last 40 operations):', ...lines);
      this.fail(`linearizability: ${res.reason}`);
    }
  }
}

/** Message type names for traces. */
export function msgName(t: MsgType): string {
  return MsgType[t];
}
