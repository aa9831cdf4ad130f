/**
 * L3 planning at consolidation time (CONTRACT §8): the events of a consolidation batch become goals and
 * tasks (`level: 3` events, events whose `parent_id` names a goal or task, plans in the text), proposed
 * as one `l3.plan` command. Runs on the shard leader, before the batch's `memory.consolidate`, with the
 * node's LLM when configured (its plan is computed here and travels in the command).
 *
 * This is the I/O shell: it reads the user's records, asks the LLM and proposes; what the batch plans is
 * decided by memory's pure `planL3` (memory/src/planning/batch.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { eventMayPlan, extractTextPlanWithLlm, planFromEvent, planL3, type TextPlan } from '@strata/memory/planning';
import type { Llm } from '@strata/memory';
import { l3Sources, listGoals, listTasks, settle, type EventRecord, type L3PlanAnswer, type L3PlanCommand } from '@strata/store';
import type { Shard } from '../shards';

export interface L3PlannerOptions {
  shard: Shard;
  llm?: Llm | null;
  logger: Logger;
  now?: () => number;
  newId?: () => string;
  /** proposals refused as stale before giving up (default 3) */
  attempts?: number;
}

/** The shell around `planL3`: reads the user's records, asks the LLM, proposes `l3.plan`. */
export class L3Planner {
  constructor(private readonly o: L3PlannerOptions) {}

  /** Plans the events (one user's, in acceptance order); null when they give nothing. Stale plans are made again. */
  async planEvents(userId: string, events: readonly EventRecord[]): Promise<L3PlanAnswer | null> {
    const { shard } = this.o;
    const candidates = events.filter((e) => e.content_type === 'text');
    // Most chat gives no goal or task: then the user's goals, tasks and planned events are not read.
    if (!candidates.some((e) => this.mayPlan(e))) return null;
    const textPlans = new Map<string, TextPlan | null>();
    let usedLlm = false;
    const attempts = this.o.attempts ?? 3;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const [goals, tasks, sources] = await Promise.all([listGoals(shard.db, userId), listTasks(shard.db, userId), l3Sources(shard.db, userId)]);
      const todo = candidates.filter((e) => !sources.has(e.event_id));
      if (this.o.llm) {
        for (const e of todo) {
          if (textPlans.has(e.event_id) || !eventMayPlan(e)) continue;
          const { plan, source } = await extractTextPlanWithLlm(this.o.llm, e.content);
          textPlans.set(e.event_id, plan);
          usedLlm = usedLlm || source === 'llm';
        }
      }
      const now = new Date((this.o.now ?? Date.now)()).toISOString();
      const batch = planL3(todo, { goals, tasks, sources }, { now, newId: this.o.newId ?? randomUUID, textPlans });
      for (const u of batch.unresolved) {
        this.o.logger.info({ shard: shard.id, user_id: userId, ...u }, 'event names a parent that is no goal or task; no task was made of it');
      }
      if (batch.events.length === 0 && batch.updates.length === 0) return null;
      const command: L3PlanCommand = { type: 'l3.plan', user_id: userId, at: now, planner: usedLlm ? 'llm' : 'offline', events: batch.events, updates: batch.updates };
      const answer = settle(await shard.log.propose(command));
      if (answer.applied) return answer;
      this.o.logger.debug({ shard: shard.id, user_id: userId, stale: answer.stale, attempt }, 'L3 plan was stale; planning again');
    }
    throw new Error(`L3 planning for user '${userId}' was stale ${attempts} times`);
  }

  /**
   * Whether the event may give goals or tasks, decided without the user's L3 state and never wrong by
   * omission: an event with a level of 3, a parent, or text the LLM would be asked about may; any other
   * is planned offline from its own text (planFromEvent reads no state for it), so asking that now says
   * exactly whether the full planning would give something.
   */
  private mayPlan(event: EventRecord): boolean {
    if (event.level === 3 || event.parent_id !== null || (this.o.llm && eventMayPlan(event))) return true;
    const probe = planFromEvent(event, { newId: () => 'probe', now: new Date(0).toISOString(), resolveParent: () => null });
    return probe.goals.length + probe.tasks.length > 0;
  }
}
