/**
 * Raft on /metrics: per shard group, what `RaftGroup` exposes (status, log size, counters), read at
 * scrape time, so nothing is counted twice and the Raft package stays free of prom-client. Counters
 * are since the process started (a restart resets them, as Prometheus expects of counters).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { GroupCounters, GroupStatus, RaftGroup } from '@strata/raft';

/** What the metrics read: the node's groups and its driver's counters. */
export interface RaftSource {
  shardIds(): number[];
  group(shardId: number): RaftGroup;
  /** the driver's flush loop counters (RaftHost.stats) */
  hostStats(): { flushes: number; syncedWrites: number; entriesWritten: number; messagesOut: number; tickStalls: number };
  /** the peer transport's counters (HttpTransport.stats) */
  transportStats(): { sendErrors: number; requestsSent: number; requestsReceived: number; rejected: number; busy: number };
}

interface Scrape {
  shard: string;
  group: RaftGroup;
  status: GroupStatus;
}

type Read = (s: Scrape) => number;

const counted = (key: keyof GroupCounters): Read => (s) => s.group.counters[key];

const SHARD_GAUGES: [string, string, Read][] = [
  ['strata_raft_term', 'Current Raft term, by shard', (s) => s.status.term],
  ['strata_raft_leader_id', 'Node id of the leader this node knows of (0: none), by shard', (s) => s.status.leader ?? 0],
  ['strata_raft_is_leader', '1 when this node leads the shard group, else 0', (s) => (s.status.role === 'leader' ? 1 : 0)],
  ['strata_raft_commit_index', 'Highest log index known committed, by shard', (s) => s.status.commitIndex],
  ['strata_raft_applied_index', 'Highest log index applied to the state machine here, by shard', (s) => s.status.appliedIndex],
  ['strata_raft_last_index', 'Last index of the log held here, by shard', (s) => s.status.lastIndex],
  ['strata_raft_log_entries', 'Entries held in the log since its last compaction (snapshot), by shard', (s) => s.group.logSize().entries],
  ['strata_raft_log_bytes', 'Payload bytes of the entries held in the log, by shard', (s) => s.group.logSize().bytes],
  ['strata_raft_log_memory_bytes', 'Of those, the payload bytes held in memory (raft.held_payload_bytes of applied ones, and those not applied yet), by shard', (s) => s.group.logSize().held],
  ['strata_raft_voters', 'Voting members of the shard group', (s) => s.status.members.filter((m) => m.voter).length],
];

const SHARD_COUNTERS: [string, string, Read][] = [
  ['strata_raft_proposals_total', 'Entries proposed through this node while it led the shard group', counted('proposals')],
  ['strata_raft_elections_started_total', 'Elections this node started (campaigns, leadership transfers included), by shard', counted('electionsStarted')],
  ['strata_raft_elections_won_total', 'Times this node became leader, by shard', counted('electionsWon')],
  ['strata_raft_snapshot_sends_total', 'Snapshot transfers this node began to a lagging follower, by shard', counted('snapshotsSent')],
  ['strata_raft_snapshot_installs_total', 'Snapshots received from a leader and installed here, by shard', counted('snapshotsInstalled')],
];

export function registerRaftMetrics(registry: Registry, source: RaftSource): void {
  const scrape = (): Scrape[] =>
    source.shardIds().map((id) => {
      const group = source.group(id);
      return { shard: String(id), group, status: group.status() };
    });
  for (const [name, help, read] of SHARD_GAUGES) {
    new Gauge({
      name, help, labelNames: ['shard'], registers: [registry],
      collect() {
        this.reset();
        for (const s of scrape()) this.set({ shard: s.shard }, read(s));
      },
    });
  }
  for (const [name, help, read] of SHARD_COUNTERS) {
    new Counter({
      name, help, labelNames: ['shard'], registers: [registry],
      collect() {
        this.reset();
        for (const s of scrape()) this.inc({ shard: s.shard }, read(s));
      },
    });
  }
  // The leader's view of each follower: how many committed entries it still lacks (0 on followers).
  new Gauge({
    name: 'strata_raft_follower_lag_entries', help: 'On the leader: committed entries each member has not yet replicated, by shard and peer',
    labelNames: ['shard', 'peer'], registers: [registry],
    collect() {
      this.reset();
      for (const s of scrape()) {
        if (s.status.role !== 'leader') continue;
        for (const m of s.status.members) {
          if (m.id === s.status.nodeId || m.matchIndex === null) continue;
          this.set({ shard: s.shard, peer: String(m.id) }, Math.max(0, s.status.commitIndex - m.matchIndex));
        }
      }
    },
  });
  const hostCounter = (name: string, help: string, read: () => number) =>
    new Counter({
      name, help, registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  hostCounter('strata_raft_flushes_total', 'Flush loops of the Raft driver (all shards together)', () => source.hostStats().flushes);
  hostCounter('strata_raft_synced_writes_total', 'Synced (fsync) writes of the Raft log (group commit: one per flush that appends)', () => source.hostStats().syncedWrites);
  hostCounter(
    'strata_raft_tick_stalls_total',
    'Raft ticks that came a minimum election timeout or more late (event loop blocked or CPU starved): followers of the groups led here may have elected',
    () => source.hostStats().tickStalls,
  );
  hostCounter('strata_raft_entries_written_total', 'Log entries written to disk here (all shards)', () => source.hostStats().entriesWritten);
  hostCounter('strata_raft_peer_send_errors_total', 'Raft peer requests that failed (peer down, refused, timed out)', () => source.transportStats().sendErrors);
  hostCounter('strata_raft_peer_requests_received_total', 'Signed Raft peer requests accepted', () => source.transportStats().requestsReceived);
  hostCounter('strata_raft_peer_requests_rejected_total', 'Raft peer requests refused: bad signature, stale, replayed', () => source.transportStats().rejected);
}
