/**
 * Memory maintenance (CONTRACT §7), transport free (a principal and plain input in, the scope check made
 * here): hard delete of a unit, and semantic forget/update in two steps.
 * A preview plans (semantic module, over the user's units and events, with the node's embedder) and
 * proposes the plan as `semantic.plan` (replicated, expiring after 15 minutes); nothing else changes.
 * An execution turns the stored plan into exact changes (`executePlan`) and proposes them as one
 * `semantic.execute` command, which also consumes the plan (a second execution finds nothing: 404).
 */
import { randomUUID } from 'node:crypto';
import {
  createSemanticPlan, executePlan, previewView, type CandidateEvent, type SemanticPlan,
} from '@strata/memory/semantic';
import {
  allUnits, badRequest, commandVector, forbidden, getSemanticPlan, getUnit, notFound, settle, userEvents, userVectors,
  type MemoryUnit, type SemanticPlanRecord, type StateDb,
} from '@strata/store';
import type { Principal } from '../auth/principal';
import { requireNamedOrgs } from '../auth/scope';
import { unitView } from './views';
import type { Body } from '../schemas';
import type { Services } from '../services';

/** Events searched by a forget preview (the newest streams' events beyond it are not matched by text). */
const MAX_PREVIEW_EVENTS = 50_000;
/** The stream of a new unit an update instruction creates when it replaces nothing and the user has no events. */
const NIL_STREAM = '00000000-0000-0000-0000-000000000000';

/**
 * Cosine at or above which a unit matches a forget target by meaning alone. The local word-vector (SIF)
 * and hashing embedders put long texts close to everything (measured with the local embedder: a long
 * unrelated insight scores 0.73-0.75 against "my old address" and "my job", while "my sister" against
 * "Anna is my older sister" scores 0.90), so they need a stricter bar than the module's default, which
 * fits model embeddings.
 */
function similarityThreshold(services: Services): number | undefined {
  const provider = services.config.embedding.provider;
  return provider === 'local' || provider === 'hashing' ? 0.85 : undefined;
}

function newestStream(events: readonly { stream_id: string; transaction_time: string }[]): string | null {
  let best: { stream_id: string; transaction_time: string } | null = null;
  for (const e of events) if (!best || e.transaction_time > best.transaction_time) best = e;
  return best?.stream_id ?? null;
}

/** Plans a forget or update instruction, stores the plan (15 minutes) and shows what it would change. */
export async function previewSemantic(services: Services, principal: Principal, userId: string, body: Body<'SemanticPreview'>) {
  await services.scope.authorizeUser(principal, { user_id: userId, org_ids: [body.org_id], write: true });
  const { db, log } = services.shards.forUser(userId);
  const embedder = services.providers.embedder;
  const orgId = body.org_id ?? null;
  const [stored, events, vectors] = await Promise.all([allUnits(db, userId), userEvents(db, userId, MAX_PREVIEW_EVENTS), userVectors(db, userId)]);
  // With org_id, the plan is about that organization's memory of the user only.
  const units = orgId === null ? stored : stored.filter((u) => u.org_id === orgId);
  const candidates: CandidateEvent[] = events
    .filter((e) => orgId === null || e.org_id === orgId)
    .map((e) => ({ event_id: e.event_id, content: e.content, content_type: e.content_type, transaction_time: e.transaction_time }));
  const now = new Date().toISOString();
  const plan = await createSemanticPlan({
    plan_id: randomUUID(), user_id: userId, now, instruction: body.instruction, mode: body.mode, forget_mode: body.forget_mode,
    limit: body.limit, org_id: orgId, units, events: candidates, embedder, similarity_threshold: similarityThreshold(services),
    vectorOf: (u) => {
      const v = vectors.get(u.id);
      return v && v.embedder_id === embedder.id ? v.vector : null;
    },
    default_stream_id: newestStream(events) ?? NIL_STREAM,
  });
  const record: SemanticPlanRecord = {
    plan_id: plan.plan_id, user_id: userId, org_id: plan.org_id, created_at: plan.created_at, expires_at: plan.expires_at,
    plan: plan as unknown as Record<string, unknown>,
  };
  settle(await log.propose({ type: 'semantic.plan', at: now, record }));
  return previewView(plan, unitView);
}

/**
 * The plan by id: in the user's shard (this node holds it: the request was routed to its leader), else
 * only whose it is, from another group (to answer 403 rather than 404), read where that group is held.
 * Plan ids are UUIDs: anything else names no plan.
 */
async function findPlan(services: Services, userId: string, planId: string): Promise<SemanticPlanRecord | { user_id: string } | undefined> {
  const home = services.shards.forUser(userId);
  const own = await getSemanticPlan(home.db, planId);
  if (own) return own;
  if (!UUID.test(planId)) return undefined;
  const others = services.shards.groupIds().filter((g) => g !== home.id);
  const owner = others.length > 0 ? (await services.reads.each('semanticPlanOwner', { plan_id: planId }, { groups: others })).find((u) => u !== null) : null;
  return owner ? { user_id: owner } : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Executes a previewed plan exactly as shown (confirm must be true); the plan is consumed. */
export async function executeSemantic(services: Services, principal: Principal, userId: string, body: Body<'SemanticExecute'>) {
  await services.scope.authorizeUser(principal, { user_id: userId, org_ids: [body.org_id], write: true });
  if (body.confirm !== true) {
    throw badRequest('validation_failed', 'confirm must be true to execute a plan; preview it first, then send "confirm": true.', [{ path: '/confirm', message: 'must be true' }]);
  }
  const planId = body.plan_id.toLowerCase();
  const record = await findPlan(services, userId, planId);
  if (!record) throw notFound(`No plan '${body.plan_id}' to execute (unknown, expired or executed already); make a new preview.`);
  if (record.user_id !== userId || !('plan' in record)) throw forbidden('This plan belongs to another user.');
  // A plan about an org's memory of the user is executed only with credentials that may name that org.
  requireNamedOrgs(principal, [record.org_id]);
  const plan = record.plan as unknown as SemanticPlan;
  const { db, log } = services.shards.forUser(userId);
  const listed = [
    ...(plan.forget_preview?.memory_units.map((u) => u.id) ?? []),
    ...(plan.update_preview?.actions.map((a) => a.target_unit_id) ?? []),
  ];
  const current = new Map<string, MemoryUnit>();
  for (const id of new Set(listed)) {
    const unit = await getUnit(db, userId, id);
    if (unit) current.set(id, unit);
  }
  const now = new Date().toISOString();
  const result = executePlan(plan, {
    user_id: userId, org_id: body.org_id, confirm: body.confirm, now, newId: randomUUID, currentUnit: (id) => current.get(id),
  });
  const { changes } = result;
  const embedder = services.providers.embedder;
  const create = changes.create_unit
    ? { unit: changes.create_unit, ...commandVector((await embedder.embed([changes.create_unit.content]))[0]) }
    : null;
  const answer = settle(await log.propose({
    type: 'semantic.execute', user_id: userId, at: now, plan_id: planId, embedder_id: embedder.id,
    retire: changes.retire, delete_unit_ids: changes.delete_unit_ids, delete_event_ids: changes.delete_event_ids, create, edges: changes.edges,
  }));
  if (body.reviewer || body.note) services.logger.info({ user_id: userId, plan_id: planId, reviewer: body.reviewer ?? null, note: body.note ?? null }, 'semantic plan executed');
  // What apply changed (a unit deleted or retired since the preview is not counted).
  const changed = new Set([...answer.retired_unit_ids, ...answer.deleted_unit_ids]);
  return { ...result.response, affected_unit_ids: result.response.affected_unit_ids.filter((id) => changed.has(id)) };
}

/** Hard-deletes a memory unit everywhere; cascade 'events' also deletes its source events. */
export async function deleteMemoryUnit(services: Services, principal: Principal, userId: string, memoryId: string, cascade: unknown) {
  await services.scope.authorizeUser(principal, { user_id: userId, write: true });
  const db: StateDb = services.shards.forUser(userId).db;
  if (cascade !== undefined && cascade !== '' && cascade !== 'events') {
    throw badRequest('validation_failed', 'cascade must be "events" (or absent).', [{ path: '/cascade', message: 'must be events' }]);
  }
  const id = memoryId.toLowerCase();
  const unit = await getUnit(db, userId, id);
  if (!unit) throw notFound(`User '${userId}' has no memory unit '${memoryId}'.`);
  const eventIds = cascade === 'events' ? unit.references : [];
  const answer = settle(await services.shards.forUser(userId).log.propose({
    type: 'memory.delete', user_id: userId, at: new Date().toISOString(), unit_ids: [id], event_ids: eventIds, require_units: true,
  }));
  return {
    status: 'deleted', memory_id: id, mode: 'hard',
    ...(cascade === 'events' ? { deleted_event_ids: answer.deleted_event_ids } : {}),
  };
}

