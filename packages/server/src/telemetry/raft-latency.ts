/**
 * Where a write's time goes inside Raft, as histograms: commit latency of the proposals made on this
 * node (propose → found committed here: the leader's log write and a majority's acknowledgements),
 * and the time and size of each applied batch (one Raft Ready's committed entries), on every replica.
 * The Prometheus counterpart of the spans raft-tracing.ts records when tracing is on.
 */
import { performance } from 'node:perf_hooks';
import type { EntryPosition, GroupObserver, RaftGroup } from '@strata/raft';
import type { Metrics } from '../metrics';

/** Proposals of this node tracked at most (one that never commits must not stay forever). */
const MAX_TRACKED = 10_000;

export function latencyObserver(shardId: number, metrics: Metrics): GroupObserver {
  const labels = { shard: String(shardId) };
  /** index → [term, proposed at] */
  const proposed = new Map<number, [number, number]>();
  let applyingAt = 0;
  const observer: GroupObserver = {
    proposed(index, term) {
      proposed.set(index, [term, performance.now()]);
      if (proposed.size > MAX_TRACKED) proposed.delete(proposed.keys().next().value!);
    },
    applying(entries: readonly EntryPosition[]) {
      applyingAt = performance.now();
      if (proposed.size === 0) return;
      for (const e of entries) {
        const p = proposed.get(e.index);
        if (!p) continue;
        proposed.delete(e.index);
        // another leader's entry at the index: ours never committed
        if (p[0] === e.term) metrics.raftCommitSeconds.observe(labels, (applyingAt - p[1]) / 1000);
      }
    },
    applied(entries: readonly EntryPosition[]) {
      metrics.raftApplySeconds.observe(labels, (performance.now() - applyingAt) / 1000);
      metrics.raftApplyBatchEntries.observe(labels, entries.length);
    },
  };
  return observer;
}

/** A group has one observer: this one calls each of several, in order. */
export function observeAll(group: RaftGroup, observers: (GroupObserver | null)[]): void {
  const all = observers.filter((o): o is GroupObserver => o !== null);
  group.observe({
    proposed: (index, term) => all.forEach((o) => o.proposed?.(index, term)),
    applying: (entries) => all.forEach((o) => o.applying?.(entries)),
    applied: (entries) => all.forEach((o) => o.applied?.(entries)),
  });
}
