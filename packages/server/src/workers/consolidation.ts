/**
 * The consolidation worker of one shard: pending L0 events → `memory.consolidate` commands (L1), then
 * `memory.insights` commands (L2). It runs only where the shard's log can propose (the leader; a single
 * node always), plans with the node's embedder and LLM, and changes nothing itself: every result goes
 * through the log (ARCHITECTURE.md, the one rule).
 *
 * One tick: take up to `batchSize` pending events dealt fairly over users (fair-batch.ts), plan and
 * propose one command per user batch (the users' batches concurrently), then insights for users whose
 * memory changed and settled (insights-cadence.ts: not per batch), then (now and then) reflections on
 * streams that went quiet. Ticks never overlap; `stop()` waits for the tick in flight, so the log is never closed
 * under a proposal. Issue 13's measurements of this loop: docs/performance.md, "Consolidation".
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { planConsolidation } from '@strata/memory/consolidation';
import { streamIsQuiet } from '@strata/memory/insights';
import type { Embedder, Llm } from '@strata/memory';
import {
  getEvents, PendingKeys, reflectionsDue, settle, StrataError, unindexedPending, withCommandVectors,
  type ApplyFailure, type ConsolidateAnswer, type ConsolidateCommand, type ConsolidateUsersCommand, type ConsolidationFailedCommand, type EventRecord, type InsightsCommand, type PendingItem,
} from '@strata/store';
import { trace } from '@opentelemetry/api';
import type { Metrics } from '../metrics';
import type { Shard } from '../shards';
import { failed as markFailed, type Tracing } from '../telemetry/tracing';
import {
  DEFAULT_RETRY_POLICY, noteFailure, noteSuccess, pickFairBatch, type RetryPolicy, type RetryState, type UserBatch, type UserQueue,
} from './fair-batch';
import { planStreamReflection, planUserInsights, type PlanContext } from './insights';
import { DEFAULT_INSIGHTS_CADENCE, insightsDueNow, type InsightsChange } from './insights-cadence';
import { MemoryViews } from './memory-view';
import { L3Planner } from './planning';

export interface ConsolidationWorkerOptions {
  shard: Shard;
  embedder: Embedder;
  llm?: Llm | null;
  logger: Logger;
  intervalMs: number;
  batchSize: number;
  retry?: RetryPolicy;
  /** Minutes without events after which a stream gets a reflection (default 30). */
  quietMinutes?: number;
  /** How often due reflections are looked for (default 60 s). */
  reflectionCheckMs?: number;
  /** A user still busy gets insights at most this long after its memory changed (default 60 s). */
  insightsMaxDelayMs?: number;
  /** A user's memory unchanged this long (and the shard drained) before its insights are planned (default 1 s). */
  insightsQuietMs?: number;
  /** At least this long between two insight plannings of one user, unless insightsMaxDelayMs forces one (default 10 s). */
  insightsIntervalMs?: number;
  /** Injected for tests: the clock (epoch ms) and the id source. */
  now?: () => number;
  newId?: () => string;
  /** drain rate, batch durations and failures (strata_consolidation_*) */
  metrics?: Metrics | null;
  /** a `consolidation.batch` span (the root of its own trace) per batch, its proposal under it */
  tracing?: Tracing | null;
  /** bytes the users' memory views held between batches may take (memory-view.ts; default 64 MiB) */
  viewBytes?: number;
  /**
   * How long a partial batch waits for more events (default 1,000 ms): a tick follows once `batchSize`
   * events are pending or this long after the first event that came since the last tick began, so a
   * trickle's events share a tick (its backlog reads, one consolidation command: one log entry, one
   * apply and one LevelDB batch on every replica) instead of paying those per event or two. A worker
   * with a full batch or more pending goes on at once. This bounds the lag of a trickle; a burst is
   * worked through back to back as before (docs/performance.md, issue 27, "A trickle gathered").
   */
  gatherMs?: number;
  /**
   * A tick's batches of at most this many events (default 8) are proposed together, in one
   * `memory.consolidate_users` (docs/performance.md, issue 27); larger ones in a command each.
   */
  combineMaxEvents?: number;
}

export interface TickReport {
  batches: number;
  events: number;
  units: number;
  dropped: number;
  failed: number;
  insights: number;
  reflections: number;
  /** users and streams whose L2 memory was planned (whether or not anything changed) */
  l2_planned: number;
  /** batches whose planning or proposal failed (retried later) */
  errors: number;
}

/** A plan that no longer fit the state when applied: planned again, counted as an attempt. */
class StalePlanError extends Error {}

const emptyReport = (): TickReport => ({ batches: 0, events: 0, units: 0, dropped: 0, failed: 0, insights: 0, reflections: 0, l2_planned: 0, errors: 0 });

/** The log cannot take proposals here now (shutting down, not the leader): not the batch's fault. */
function isUnavailable(err: unknown): boolean {
  return err instanceof StrataError && err.status === 503;
}

export class ConsolidationWorker {
  private readonly retries = new Map<string, RetryState>();
  /** user → when its memory first and last changed since its last insights */
  private readonly insightsDue = new Map<string, InsightsChange>();
  /** user → when its insights were last planned (entries older than the interval are dropped now and then) */
  private readonly insightsPlanned = new Map<string, number>();
  /** false until a scan found no pending entry without its per-user index (older data directories); again after a snapshot install */
  private legacyDrained = false;
  private cursor: string | null = null;
  private lastReflectionCheck = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<unknown> | null = null;
  private stopped = false;
  /** totals of the current busy period, for the summary logged when the backlog drains */
  private busy: (TickReport & { since: number }) | null = null;
  private readonly o: Required<Omit<ConsolidationWorkerOptions, 'llm' | 'metrics' | 'tracing' | 'viewBytes'>> & { llm: Llm | null };
  /**
   * What the timer waits for: the idle interval (a wake re-arms it to the gather window), a gather
   * window (a wake only checks whether a full batch is pending), or nothing (the tick is due now).
   */
  private armed: 'idle' | 'gather' | 'now' = 'idle';
  /** when the first event since the last tick began arrived (wall clock, as the timers): where the gather window starts */
  private gatherFrom: number | null = null;
  /** users' memory as consolidation compares with it, kept current between batches */
  private readonly views: MemoryViews;
  private readonly metrics: Metrics | null;
  private readonly tracing: Tracing | null;
  private readonly l3: L3Planner;
  /** the backlog's keys in memory, so a tick reads its queues by key, not through the consumed entries' tombstones */
  private readonly pendingKeys: PendingKeys;

  constructor(options: ConsolidationWorkerOptions) {
    this.o = {
      retry: DEFAULT_RETRY_POLICY, quietMinutes: 30, reflectionCheckMs: 60_000, insightsMaxDelayMs: DEFAULT_INSIGHTS_CADENCE.maxDelayMs,
      insightsQuietMs: DEFAULT_INSIGHTS_CADENCE.quietMs, insightsIntervalMs: DEFAULT_INSIGHTS_CADENCE.intervalMs, gatherMs: 1000, combineMaxEvents: 8,
      now: Date.now, newId: randomUUID, ...options, llm: options.llm ?? null,
    };
    this.metrics = options.metrics ?? null;
    this.tracing = options.tracing ?? null;
    // Every series exists from the start at 0, so rate() and alerts see the first failure as an increase.
    const shard = String(this.o.shard.id);
    this.metrics?.consolidatedEvents.inc({ shard }, 0);
    this.metrics?.consolidationBatches.inc({ shard }, 0);
    for (const kind of ['batch', 'gave_up']) this.metrics?.consolidationFailures.inc({ shard, kind }, 0);
    this.pendingKeys = new PendingKeys(this.o.shard.db, this.o.shard.sm);
    this.views = new MemoryViews({ db: this.o.shard.db, embedderId: this.o.embedder.id, sm: this.o.shard.sm, maxBytes: options.viewBytes });
    this.o.shard.sm?.onApplied((_index, command) => {
      if (command.type === 'events.ingest' || command.type === 'import.records') this.wake();
    });
    this.o.shard.sm?.onRestored(() => { this.legacyDrained = false; });
    this.l3 = new L3Planner({ shard: this.o.shard, llm: this.o.llm, logger: this.o.logger, now: this.o.now, newId: this.o.newId });
  }

  start(): void {
    if (this.stopped || this.timer) return;
    this.schedule();
  }

  /**
   * New pending events on the shard (an applied ingest or import, on every replica): a sleeping worker
   * ticks at the end of the gather window instead of its idle interval, or at once when a full batch
   * is pending; a tick in flight leaves it to the schedule after it (`nextDelay`).
   */
  private wake(): void {
    if (this.stopped) return;
    this.gatherFrom ??= Date.now();
    if (!this.timer || this.inFlight || this.armed === 'now') return;
    if (this.o.shard.log.isLeader() && this.fullBatchPending()) {
      clearTimeout(this.timer);
      this.schedule(0, 'now');
    } else if (this.armed === 'idle') {
      clearTimeout(this.timer);
      this.schedule(this.gatherDelay(), 'gather');
    }
  }

  /** What is left of the gather window that began with the first event since the last tick began. */
  private gatherDelay(): number {
    return Math.max(0, (this.gatherFrom ?? Date.now()) + this.o.gatherMs - Date.now());
  }

  private fullBatchPending(): boolean {
    return this.o.shard.db.counterSync('pending') >= this.o.batchSize;
  }

  /**
   * After a tick: at once while a full batch is pending and the tick found work (a backlog is worked
   * through back to back; one whose events all wait out a retry's backoff is not spun on), at the end
   * of the gather window while a partial one is (events that came during the tick, or retries), else
   * asleep for the idle interval until a wake.
   */
  private nextDelay(worked: boolean): [number, ConsolidationWorker['armed']] {
    // Not the leader: nothing to tick for but the idle poll, which finds out when this node becomes it.
    if (!this.o.shard.log.isLeader()) return [this.o.intervalMs, 'idle'];
    const pending = this.o.shard.db.counterSync('pending');
    if (pending >= this.o.batchSize && worked) return [0, 'now'];
    if (pending > 0) return [this.gatherDelay(), 'gather'];
    return [this.o.intervalMs, 'idle'];
  }

  /** Stops ticking and waits for the tick in flight (its proposal included). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.inFlight) await this.inFlight;
  }

  /**
   * `intervalMs` is the idle poll period: while a backlog is being worked through, the next tick follows
   * at once (`nextDelay`), and events applied to the shard while the worker sleeps wake it (`wake`).
   */
  private schedule(delayMs = this.o.intervalMs, armed: ConsolidationWorker['armed'] = 'idle'): void {
    this.armed = armed;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.gatherFrom = null;
      let worked = false;
      const run = this.tick()
        .then((report) => { worked = report.batches + report.errors + report.failed > 0; })
        .catch((err) => this.o.logger.error({ err, shard: this.o.shard.id }, 'consolidation tick failed'))
        .finally(() => {
          this.inFlight = null;
          if (this.stopped) return;
          this.schedule(...this.nextDelay(worked));
        });
      this.inFlight = run;
    }, delayMs);
    this.timer.unref?.();
  }

  /** One round of work; public so tests drive the worker step by step. */
  async tick(): Promise<TickReport> {
    const report = emptyReport();
    const started = Date.now();
    const { shard, batchSize } = this.o;
    if (!shard.log.isLeader()) return report;
    // The idle poll (every intervalMs on every shard leader) reads one counter, not the backlog's keys.
    const queues = shard.db.counterSync('pending') > 0 ? await this.queues() : [];
    const batches = pickFairBatch(queues, batchSize, this.retries, this.o.now());
    // Small batches (a trickle's few events per user) go into one command: a proposal, a log entry and
    // an apply per user cost more than their events. Larger ones keep a command each, and run side by
    // side: they share nothing, so one is planned while another's proposal waits for its log write.
    const small = batches.filter((b) => b.entries.length <= this.o.combineMaxEvents);
    const running: Promise<void>[] = [];
    if (small.length > 1 && !this.stopped && shard.log.isLeader()) running.push(this.runTogether(small, report));
    for (const batch of small.length > 1 ? batches.filter((b) => !small.includes(b)) : batches) {
      if (this.stopped || !shard.log.isLeader()) break;
      running.push(this.runBatch(batch, report));
    }
    await Promise.all(running);
    const idle = shard.db.counterSync('pending') === 0;
    this.summarize(report, started, idle);
    const l2Started = Date.now();
    if (!this.stopped) await this.runInsights(report, idle);
    if (!this.stopped && this.o.now() - this.lastReflectionCheck >= this.o.reflectionCheckMs) {
      this.lastReflectionCheck = this.o.now();
      await this.runReflections(report);
    }
    if (report.l2_planned > 0) {
      this.o.logger.info({
        shard: shard.id, planned: report.l2_planned, insights: report.insights, reflections: report.reflections, ms: Date.now() - l2Started,
      }, 'L2 planning done');
    }
    return report;
  }

  /** Users with pending events, in round-robin order from the cursor, with their oldest events. */
  private async queues(): Promise<UserQueue[]> {
    const { db } = this.o.shard;
    // Every command that makes a pending entry indexes it by user too, so once none is left unindexed
    // none comes back (but from a snapshot): the scan from the start of `pending`, which walks the
    // tombstones of every consumed entry, is not paid per tick.
    const legacy = this.legacyDrained ? [] : await unindexedPending(db, this.o.batchSize);
    if (legacy.length === 0) this.legacyDrained = true;
    if (legacy.length > 0) {
      const byUser = new Map<string, PendingItem[]>();
      for (const e of legacy) byUser.set(e.user_id, [...(byUser.get(e.user_id) ?? []), e]);
      return [...byUser.entries()].map(([user_id, entries]) => ({ user_id, entries }));
    }
    const queues = await this.pendingKeys.queues(this.cursor, this.o.batchSize, this.o.batchSize);
    if (queues.length > 0) this.cursor = queues[queues.length - 1].user_id;
    return queues;
  }

  private context(): PlanContext {
    return { db: this.o.shard.db, embedder: this.o.embedder, now: new Date(this.o.now()).toISOString(), newId: this.o.newId };
  }

  private runBatch(batch: UserBatch, report: TickReport): Promise<void> {
    if (!this.tracing?.enabled) return this.consolidateBatch(batch, report);
    const attributes = { 'strata.shard': this.o.shard.id, 'strata.user_id': batch.user_id, 'strata.consolidation.events': batch.entries.length };
    // A root span: a batch belongs to no request (the tick's timer may have been armed inside one).
    return this.tracing.span('consolidation.batch', { root: true, attributes }, () => this.consolidateBatch(batch, report));
  }

  private runTogether(batches: UserBatch[], report: TickReport): Promise<void> {
    if (!this.tracing?.enabled) return this.consolidateTogether(batches, report);
    const attributes = {
      'strata.shard': this.o.shard.id, 'strata.consolidation.users': batches.length,
      'strata.consolidation.events': batches.reduce((n, b) => n + b.entries.length, 0),
    };
    return this.tracing.span('consolidation.batches', { root: true, attributes }, () => this.consolidateTogether(batches, report));
  }

  private async consolidateBatch(batch: UserBatch, report: TickReport): Promise<void> {
    const started = Date.now();
    try {
      const command = await this.plan(batch, new Date(this.o.now()).toISOString());
      const answer = settle(await this.o.shard.log.propose(command));
      this.noteAnswer(batch, answer, started, report);
    } catch (err) {
      await this.noteFailure(batch, err, report);
    }
  }

  /**
   * Small batches of several users: each planned (side by side, as alone), then the plans proposed in
   * one `memory.consolidate_users`, whose answer holds each batch's own (applied, stale or refused). A
   * batch whose planning failed is retried alone as before; one refused by apply does not hold the others.
   */
  private async consolidateTogether(batches: UserBatch[], report: TickReport): Promise<void> {
    const started = Date.now();
    const now = new Date(this.o.now()).toISOString();
    const planned = await Promise.all(batches.map(async (batch) => {
      try {
        return { batch, command: await this.plan(batch, now) };
      } catch (err) {
        await this.noteFailure(batch, err, report);
        return null;
      }
    }));
    const ready = planned.filter((p) => p !== null);
    if (ready.length === 0) return;
    let answers: (ConsolidateAnswer | ApplyFailure)[];
    try {
      const command: ConsolidateUsersCommand = {
        type: 'memory.consolidate_users', at: now, users: ready.map(({ command: { type: _type, at: _at, ...batch } }) => batch),
      };
      answers = settle(await this.o.shard.log.propose(command)).users;
    } catch (err) {
      for (const { batch } of ready) await this.noteFailure(batch, err, report);
      return;
    }
    for (const [i, { batch }] of ready.entries()) {
      try {
        this.noteAnswer(batch, settle(answers[i]), started, report);
      } catch (err) {
        await this.noteFailure(batch, err, report);
      }
    }
  }

  /** A committed answer of one batch: counted, or a stale plan thrown (retried as a failed attempt). */
  private noteAnswer(batch: UserBatch, answer: ConsolidateAnswer, started: number, report: TickReport): void {
    if (!answer.applied) throw new StalePlanError(`stale plan: ${answer.stale}`);
    const shardLabel = { shard: String(this.o.shard.id) };
    const log = this.o.logger;
    noteSuccess(this.retries, batch.entries);
    report.batches++;
    report.events += answer.consumed;
    report.units += answer.units_created;
    report.dropped += answer.dropped;
    this.metrics?.consolidatedEvents.inc(shardLabel, answer.consumed);
    this.metrics?.consolidationBatches.inc(shardLabel);
    this.metrics?.consolidationBatchDuration.observe(shardLabel, (Date.now() - started) / 1000);
    // How long the batch's oldest event waited to become memory: the gather window plus the tick in a
    // trickle, the backlog's queue in a burst.
    const accepted = Math.min(...batch.entries.map((e) => Date.parse(e.accepted_at)));
    if (Number.isFinite(accepted)) this.metrics?.consolidationLag.observe(shardLabel, Math.max(0, this.o.now() - accepted) / 1000);
    if (answer.units_created + answer.reinforced + answer.retired > 0) {
      const now = this.o.now();
      const change = this.insightsDue.get(batch.user_id);
      if (change) change.last = now;
      else this.insightsDue.set(batch.user_id, { first: now, last: now });
    }
    log.debug({ shard: this.o.shard.id, user_id: batch.user_id, ...answer, ms: Date.now() - started }, 'consolidated a batch');
  }

  /** A batch whose planning or proposal failed: retried later, given up on after the retry policy's attempts. */
  private async noteFailure(batch: UserBatch, err: unknown, report: TickReport): Promise<void> {
    const shardLabel = { shard: String(this.o.shard.id) };
    const log = this.o.logger;
    if (isUnavailable(err)) return;
    report.errors++;
    this.metrics?.consolidationFailures.inc({ ...shardLabel, kind: 'batch' });
    const span = trace.getActiveSpan();
    if (span) markFailed(span, err);
    const message = err instanceof Error ? err.message : String(err);
    const { exhausted } = noteFailure(this.retries, batch.entries, message, this.o.now(), this.o.retry);
    log.warn({ shard: this.o.shard.id, user_id: batch.user_id, events: batch.entries.length, err: message }, 'consolidation of a batch failed; will retry');
    if (exhausted.length > 0) await this.giveUp(batch.user_id, exhausted, message, report);
  }

  /** The `memory.consolidate` command of one user's batch, planned at `now`. */
  private async plan(batch: UserBatch, now: string): Promise<ConsolidateCommand> {
    const { shard, embedder } = this.o;
    const events: EventRecord[] = [];
    const missing: PendingItem[] = [];
    const found = await getEvents(shard.db, batch.user_id, batch.entries.map((e) => e.event_id));
    batch.entries.forEach((entry, i) => {
      const event = found[i];
      if (event) events.push(event);
      else missing.push(entry);
    });
    await this.planL3(batch.user_id, events);
    const view = await this.views.get(batch.user_id);
    const plan = await planConsolidation({
      events, now, newId: this.o.newId, embedder, llm: this.o.llm ?? undefined,
      findSimilar: view.findSimilar, findBySubjectAttribute: view.findBySubjectAttribute, findSharingWords: view.findSharingWords,
    });
    return {
      type: 'memory.consolidate', user_id: batch.user_id, at: now,
      consumed: batch.entries.map((e) => ({ seq: e.seq, event_id: e.event_id })),
      embedder_id: plan.embedder_id, method: plan.method, units: withCommandVectors(plan.units), reinforced: plan.reinforced, retired: plan.retired,
      edges: plan.edges,
      // An event deleted while pending has nothing left to remember.
      dropped: [...plan.dropped, ...missing.map((m) => ({ event_id: m.event_id, reason: 'event deleted before consolidation' }))],
    };
  }

  /** Goals and tasks of the batch's events (workers/planning.ts), before they stop being pending; a planning failure does not hold L1 back. */
  private async planL3(userId: string, events: EventRecord[]): Promise<void> {
    try {
      const answer = await this.l3.planEvents(userId, events);
      if (answer) this.o.logger.debug({ shard: this.o.shard.id, user_id: userId, ...answer }, 'planned goals and tasks');
    } catch (err) {
      if (isUnavailable(err)) throw err;
      this.o.logger.warn({ err, shard: this.o.shard.id, user_id: userId }, 'L3 planning failed; the events are consolidated without it');
    }
  }

  private async giveUp(userId: string, entries: PendingItem[], error: string, report: TickReport): Promise<void> {
    const attempts = Math.max(...entries.map((e) => this.retries.get(e.seq)?.attempts ?? 0));
    const command: ConsolidationFailedCommand = {
      type: 'memory.consolidation_failed', user_id: userId, at: new Date(this.o.now()).toISOString(),
      entries: entries.map((e) => ({ seq: e.seq, event_id: e.event_id })), error, attempts,
    };
    try {
      const { failed } = settle(await this.o.shard.log.propose(command));
      noteSuccess(this.retries, entries);
      report.failed += failed;
      this.metrics?.consolidationFailures.inc({ shard: String(this.o.shard.id), kind: 'gave_up' }, failed);
      this.o.logger.error({ shard: this.o.shard.id, user_id: userId, event_ids: entries.map((e) => e.event_id), attempts, err: error }, 'consolidation gave up on events');
    } catch (err) {
      // Retried at the next tick: the entries are still pending and exhausted.
      this.o.logger.warn({ err, shard: this.o.shard.id }, 'could not record failed events');
    }
  }

  /**
   * Insights for users whose memory changed and settled (insights-cadence.ts): once the shard's backlog
   * is drained and the user's memory was quiet for a moment, at most once per interval per user, and at
   * the latest insightsMaxDelayMs after the first change. Not while the shard has a backlog: community
   * planning reads and compares all of a user's units (O(n²)), so it would hold up other users'
   * consolidation; and not per batch of a trickle, where it cost more than consolidating the events.
   */
  private async runInsights(report: TickReport, shardIdle: boolean): Promise<void> {
    const cadence = { quietMs: this.o.insightsQuietMs, intervalMs: this.o.insightsIntervalMs, maxDelayMs: this.o.insightsMaxDelayMs };
    if (this.insightsPlanned.size > 10_000) {
      for (const [user, at] of this.insightsPlanned) if (this.o.now() - at >= cadence.intervalMs) this.insightsPlanned.delete(user);
    }
    for (const [user, change] of [...this.insightsDue.entries()]) {
      if (this.stopped || !this.o.shard.log.isLeader()) return;
      if (!insightsDueNow(change, this.insightsPlanned.get(user), this.o.now(), shardIdle, cadence)) continue;
      this.insightsDue.delete(user);
      this.insightsPlanned.set(user, this.o.now());
      report.l2_planned++;
      try {
        const command = await planUserInsights(user, this.context());
        if (command) await this.proposeInsights(command, report, 'insights');
      } catch (err) {
        if (isUnavailable(err)) return;
        // Insights are derived from memory that is already safe: a failure waits for the next change.
        this.o.logger.warn({ err, shard: this.o.shard.id, user_id: user }, 'insight planning failed');
      }
    }
  }

  private async runReflections(report: TickReport): Promise<void> {
    for (const due of await reflectionsDue(this.o.shard.db, 1000)) {
      if (this.stopped || !this.o.shard.log.isLeader()) return;
      if (!streamIsQuiet(due.last_event_at, this.o.now(), this.o.quietMinutes)) continue;
      report.l2_planned++;
      try {
        const command = await planStreamReflection(due.user_id, due.stream_id, due.last_event_at, this.o.quietMinutes, this.context());
        if (command) await this.proposeInsights(command, report, 'reflections');
      } catch (err) {
        if (isUnavailable(err)) return;
        this.o.logger.warn({ err, shard: this.o.shard.id, user_id: due.user_id, stream_id: due.stream_id }, 'reflection failed');
      }
    }
  }

  private async proposeInsights(command: InsightsCommand, report: TickReport, kind: 'insights' | 'reflections'): Promise<void> {
    const answer = settle(await this.o.shard.log.propose(command));
    report[kind] += answer.created + answer.updated;
    this.o.logger.debug({ shard: this.o.shard.id, user_id: command.user_id, kind, ...answer }, 'proposed L2 memory');
  }

  /** Info line when the shard's backlog is drained after work: how much was consolidated, how fast. */
  private summarize(report: TickReport, tickStarted: number, idle: boolean): void {
    const worked = report.batches + report.errors + report.failed > 0;
    if (worked) {
      this.busy = this.busy ?? { ...emptyReport(), since: tickStarted };
      for (const k of Object.keys(report) as (keyof TickReport)[]) this.busy[k] += report[k];
    }
    if (idle && this.busy) {
      const seconds = (Date.now() - this.busy.since) / 1000;
      const { batches, events, units, dropped, failed, errors } = this.busy;
      this.o.logger.info({
        shard: this.o.shard.id, batches, events, units, dropped, failed, errors, seconds, events_per_s: seconds > 0 ? Math.round(events / seconds) : null,
      }, 'consolidation caught up');
      this.busy = null;
    }
  }
}
