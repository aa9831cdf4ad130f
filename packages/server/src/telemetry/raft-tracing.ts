/**
 * A write's way through Raft, as spans and counts:
 *
 *   raft.propose <command type>   the proposal, from the call to its answer (child of the operation)
 *     raft.commit                 from the proposal to the moment this node finds it committed
 *     raft.apply                  applying it to this node's state machine
 *
 * `InstrumentedLog` wraps a shard's CommandLog (failed proposals counted always, the propose span when
 * tracing is on); `traceObserver` turns the Raft group's observer hooks into the commit and apply spans of
 * the proposals made here. Entries proposed elsewhere (a follower applying the leader's entries) get an
 * apply span too: the proposer puts its trace context in the command (`trace`, which apply never reads),
 * and each replica records `raft.apply` as a child of that propose span, so one write's trace holds the
 * apply of every node (docs/operations.md).
 */
import { context, SpanKind, type Context } from '@opentelemetry/api';
import type { EntryPosition, GroupObserver } from '@strata/raft';
import type { Command, CommandAnswer, CommandLog, LogStatus } from '@strata/store';
import type { Metrics } from '../metrics';
import { nowMs, type Tracing } from './tracing';

export class InstrumentedLog implements CommandLog {
  constructor(
    private readonly inner: CommandLog,
    private readonly shardId: number,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
  ) {}

  propose<C extends Command>(command: C): Promise<CommandAnswer<C['type']>> {
    const attributes = { 'strata.shard': this.shardId, 'strata.command': command.type };
    return this.tracing.span(`raft.propose ${command.type}`, { kind: SpanKind.INTERNAL, attributes }, () =>
      this.inner.propose(this.withTrace(command)).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        this.metrics.raftProposalsFailed.inc({ shard: String(this.shardId), code: typeof code === 'string' ? code : 'error' });
        throw err;
      }));
  }

  /** The command with the propose span's trace context (tracing on), for the replicas' apply spans. */
  private withTrace<C extends Command>(command: C): C {
    const traceparent = this.tracing.inject().traceparent;
    return traceparent ? { ...command, trace: traceparent } : command;
  }

  readBarrier(): Promise<void> {
    return this.inner.readBarrier();
  }

  isLeader(): boolean {
    return this.inner.isLeader();
  }

  status(): LogStatus {
    return this.inner.status();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Proposals of this node not yet applied, at most (a proposal that never commits must not stay forever). */
const MAX_TRACKED = 10_000;

interface Tracked {
  term: number;
  /** the context of the propose span: the parent of its commit and apply spans */
  parent: Context;
  proposedAt: number;
  applyingAt: number | null;
}

/** Records the commit and apply spans of the proposals made on this node (tracing on only: null otherwise). */
export function traceObserver(shardId: number, tracing: Tracing): GroupObserver | null {
  if (!tracing.enabled) return null;
  const tracked = new Map<number, Tracked>();
  const attributes = (index: number, term: number) => ({ 'strata.shard': shardId, 'raft.index': index, 'raft.term': term });
  const own = (e: EntryPosition): Tracked | undefined => {
    const t = tracked.get(e.index);
    if (t && t.term !== e.term) tracked.delete(e.index); // another leader's entry took the index: ours never commits
    return t && t.term === e.term ? t : undefined;
  };
  let replicaApplyingAt: number | null = null;
  const observer: GroupObserver = {
    proposed(index, term) {
      // Called inside propose(): the active context is the propose span's (none for an untraced caller).
      tracked.set(index, { term, parent: context.active(), proposedAt: nowMs(), applyingAt: null });
      if (tracked.size > MAX_TRACKED) tracked.delete(tracked.keys().next().value!);
    },
    applying(entries) {
      const now = nowMs();
      replicaApplyingAt = now;
      for (const e of entries) {
        const t = own(e);
        if (!t) continue;
        t.applyingAt = now;
        tracing.record('raft.commit', t.proposedAt, now, attributes(e.index, e.term), t.parent);
      }
    },
    applied(entries) {
      const now = nowMs();
      for (const e of entries) {
        const t = own(e);
        if (!t) {
          // proposed on another node: a child of its propose span, when the command says which
          const parent = traceOf(e.data);
          if (parent) tracing.record('raft.apply', replicaApplyingAt ?? now, now, { ...attributes(e.index, e.term), 'raft.replica': true, 'raft.batch_entries': entries.length }, tracing.extract({ traceparent: parent }));
          continue;
        }
        tracked.delete(e.index);
        if (t.applyingAt !== null) tracing.record('raft.apply', t.applyingAt, now, { ...attributes(e.index, e.term), 'raft.batch_entries': entries.length }, t.parent);
      }
    },
  };
  return observer;
}

/**
 * The `trace` a command's JSON ends with (InstrumentedLog adds it last), read from the entry's tail
 * only: a replica does not parse whole commands to trace them.
 */
function traceOf(data: Uint8Array): string | null {
  if (data.byteLength < 20) return null;
  const tail = Buffer.from(data.buffer, data.byteOffset, data.byteLength).subarray(-96).toString('latin1');
  const m = /"trace":"(00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})"\}$/.exec(tail);
  return m ? m[1] : null;
}
