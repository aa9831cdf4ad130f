/**
 * Semantic plans (CONTRACT §7): a preview is a plan record (replicated, expiring after 15 minutes);
 * execute turns the plan into exact state changes, so the command applied is what the preview showed.
 *
 * Flow for the lead: preview -> `createSemanticPlan` (on the proposing node; may embed) -> propose
 * "put plan" -> respond `previewView(plan)`. Execute -> load plan (unknown or already executed: 404)
 * -> `executePlan` (validates confirm, owner, expiry; ids and time passed in) -> propose its `changes`
 * plus "mark plan executed" in one command -> respond `result.response`.
 *
 * Decisions:
 * - `limit` defaults to 10; above 25 it is capped at 25; below 1 or not an integer: 400.
 * - `org_id` on execute: when given it must equal the plan's (403 otherwise); when omitted the plan's
 *   is used. A plan of another user: 403. Expired (now >= expires_at): 404.
 * - Logical forget retires each listed unit at the execution time with reason `forgotten`; a unit that
 *   was already superseded keeps its retired_at (history stays true for `as_of`) and its reason
 *   becomes `forgotten` (so history queries stop showing it too). Events are kept (L0 is the record;
 *   `as_of` before the forgetting still sees the memory).
 * - Hard forget deletes the listed units and the listed matched events (the preview shows both), so
 *   the memory cannot come back from its source.
 * - Units that disappeared or (for update/logical) were retired since the preview are skipped, not
 *   resurrected or re-retired; `affected_unit_ids` lists only what changed.
 * - Update: the new unit is created with valid_time = transaction_time = execution time, level 1,
 *   speaker `user`, no references (it came from an instruction, not an event); obsolete targets get an
 *   `EvolvedTo` edge old -> new, contradicted ones a `Contradicts` edge new -> old, weight = the
 *   action's confidence; both are retired with reason `superseded` and `superseded_by` = new id.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import type { Embedder } from '../providers/types';
import { SemanticError } from './errors';
import { planForget, type CandidateEvent, type ForgetMode, type ForgetPreviewData } from './forget';
import { classifyInstruction, type InstructionKind } from './instruction';
import { planUpdate, type UpdatePreviewData } from './update';

export const PLAN_TTL_MS = 15 * 60 * 1000;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 25;
export const MAX_INSTRUCTION_CHARS = 10_000;

export interface SemanticPlan {
  plan_id: string;
  user_id: string;
  org_id: string | null;
  instruction: string;
  kind: InstructionKind;
  forget_mode: ForgetMode;
  created_at: string;
  expires_at: string;
  forget_preview?: ForgetPreviewData;
  update_preview?: UpdatePreviewData;
}

export interface CreatePlanInput {
  plan_id: string;
  user_id: string;
  /** RFC 3339 UTC. */
  now: string;
  /** Raw request fields (validated here). */
  instruction: unknown;
  mode?: unknown;
  forget_mode?: unknown;
  limit?: unknown;
  org_id?: string | null;
  /** The user's units (current and retired; org-scoped by the caller when org_id is given). */
  units: readonly MemoryUnit[];
  events?: readonly CandidateEvent[];
  embedder?: Embedder | null;
  vectorOf?: (unit: MemoryUnit) => Float32Array | null | undefined;
  similarity_threshold?: number;
  /** Stream for a new unit that replaces nothing. */
  default_stream_id: string;
}

function invalid(path: string, message: string): never {
  throw new SemanticError('validation_failed', message, [{ path, message }]);
}

export function expiresAt(createdAt: string): string {
  return new Date(Date.parse(createdAt) + PLAN_TTL_MS).toISOString();
}

/** Validate the request and build the plan (the preview). */
export async function createSemanticPlan(input: CreatePlanInput): Promise<SemanticPlan> {
  if (typeof input.instruction !== 'string' || input.instruction.trim() === '') invalid('/instruction', 'instruction must be a non-empty string.');
  const instruction = input.instruction.trim();
  if (instruction.length > MAX_INSTRUCTION_CHARS) invalid('/instruction', `instruction must be at most ${MAX_INSTRUCTION_CHARS} characters.`);
  if (input.mode !== undefined && input.mode !== null && typeof input.mode !== 'string') invalid('/mode', 'mode must be forget, update or auto.');
  const kind = classifyInstruction(instruction, input.mode as string | null | undefined);
  const fm = input.forget_mode ?? 'logical';
  if (fm !== 'logical' && fm !== 'hard') invalid('/forget_mode', 'forget_mode must be logical or hard.');
  let limit = DEFAULT_LIMIT;
  if (input.limit !== undefined && input.limit !== null) {
    if (typeof input.limit !== 'number' || !Number.isInteger(input.limit) || input.limit < 1) invalid('/limit', `limit must be an integer from 1 to ${MAX_LIMIT}.`);
    limit = Math.min(MAX_LIMIT, input.limit);
  }
  const plan: SemanticPlan = {
    plan_id: input.plan_id,
    user_id: input.user_id,
    org_id: input.org_id ?? null,
    instruction,
    kind,
    forget_mode: fm,
    created_at: input.now,
    expires_at: expiresAt(input.now),
  };
  if (kind === 'forget') {
    plan.forget_preview = await planForget({
      instruction, units: input.units, events: input.events, forget_mode: fm, limit,
      embedder: input.embedder, vectorOf: input.vectorOf, similarity_threshold: input.similarity_threshold,
    });
  } else {
    plan.update_preview = planUpdate({ instruction, units: input.units, limit, default_stream_id: input.default_stream_id, org_id: input.org_id });
  }
  return plan;
}

/** The preview response body (CONTRACT §7), with units shown through `V`. */
export interface PreviewBody<V> {
  plan_id: string;
  instruction: string;
  kind: InstructionKind;
  forget_mode: ForgetMode;
  created_at: string;
  expires_at: string;
  forget_preview?: Omit<ForgetPreviewData, 'memory_units'> & { memory_units: V[] };
  update_preview?: Omit<UpdatePreviewData, 'actions'> & { actions: (Omit<UpdatePreviewData['actions'][number], 'target_unit'> & { target_unit: V })[] };
}

/** The preview response body; `unitView` maps stored units to the API's unit view. */
export function previewView<V = MemoryUnit>(plan: SemanticPlan, unitView: (u: MemoryUnit) => V = (u) => u as unknown as V): PreviewBody<V> {
  const body: PreviewBody<V> = {
    plan_id: plan.plan_id, instruction: plan.instruction, kind: plan.kind, forget_mode: plan.forget_mode,
    created_at: plan.created_at, expires_at: plan.expires_at,
  };
  if (plan.forget_preview) {
    body.forget_preview = { ...plan.forget_preview, memory_units: plan.forget_preview.memory_units.map(unitView) };
  }
  if (plan.update_preview) {
    body.update_preview = {
      ...plan.update_preview,
      actions: plan.update_preview.actions.map((a) => ({ ...a, target_unit: unitView(a.target_unit) })),
    };
  }
  return body;
}

export interface ExecuteRequest {
  user_id: string;
  org_id?: string | null;
  confirm: unknown;
  now: string;
}

/** Throws the contract's error when the plan may not be executed now. */
export function checkExecutable(plan: SemanticPlan, req: ExecuteRequest): void {
  if (req.confirm !== true) invalid('/confirm', 'confirm must be true to execute a plan; preview it first, then send "confirm": true.');
  if (plan.user_id !== req.user_id) throw new SemanticError('forbidden', 'This plan belongs to another user.');
  if (req.org_id !== undefined && req.org_id !== null && req.org_id !== plan.org_id) {
    throw new SemanticError('forbidden', 'This plan was made for another organization.');
  }
  if (Date.parse(req.now) >= Date.parse(plan.expires_at)) {
    throw new SemanticError('not_found', 'This plan has expired (plans last 15 minutes); make a new preview.');
  }
}

export interface Retirement {
  unit_id: string;
  retired_at: string;
  retired_reason: 'superseded' | 'forgotten';
  superseded_by: string | null;
}

export interface PlanChanges {
  retire: Retirement[];
  delete_unit_ids: string[];
  delete_event_ids: string[];
  create_unit: MemoryUnit | null;
  edges: Edge[];
}

export interface ExecutionResult {
  response: {
    status: 'executed';
    plan_id: string;
    kind: InstructionKind;
    affected_unit_ids: string[];
    created_memory_unit_id?: string;
  };
  changes: PlanChanges;
}

export interface ExecuteContext extends ExecuteRequest {
  newId: () => string;
  /** The unit as it is now, or undefined if it no longer exists. */
  currentUnit: (id: string) => MemoryUnit | undefined;
}

/** The exact state changes of executing `plan` (pure). Throws `SemanticError` via `checkExecutable`. */
export function executePlan(plan: SemanticPlan, ctx: ExecuteContext): ExecutionResult {
  checkExecutable(plan, ctx);
  const changes: PlanChanges = { retire: [], delete_unit_ids: [], delete_event_ids: [], create_unit: null, edges: [] };
  const response: ExecutionResult['response'] = { status: 'executed', plan_id: plan.plan_id, kind: plan.kind, affected_unit_ids: [] };

  if (plan.kind === 'forget' && plan.forget_preview) {
    for (const listed of plan.forget_preview.memory_units) {
      const unit = ctx.currentUnit(listed.id);
      if (!unit) continue;
      if (plan.forget_mode === 'hard') changes.delete_unit_ids.push(unit.id);
      else if (unit.retired_reason !== 'forgotten') {
        changes.retire.push({ unit_id: unit.id, retired_at: unit.retired_at ?? ctx.now, retired_reason: 'forgotten', superseded_by: unit.superseded_by });
      } else continue;
      response.affected_unit_ids.push(unit.id);
    }
    if (plan.forget_mode === 'hard') changes.delete_event_ids = plan.forget_preview.matched_events.map((e) => e.id);
  }

  if (plan.kind === 'update' && plan.update_preview) {
    const draft = plan.update_preview.new_unit;
    if (draft) {
      const id = ctx.newId();
      changes.create_unit = {
        id, user_id: plan.user_id, stream_id: draft.stream_id, org_id: draft.org_id, agent_id: null, level: 1,
        memory_type: draft.memory_type, content: draft.content, keywords: [...draft.keywords], speaker: 'user',
        valid_time: ctx.now, transaction_time: ctx.now, references: [], assets: [], importance: draft.importance,
        subject: draft.subject, attribute: draft.attribute, retired_at: null, retired_reason: null, superseded_by: null,
      };
      response.created_memory_unit_id = id;
      for (const a of plan.update_preview.actions) {
        if (a.action !== 'obsolete' && a.action !== 'contradicts') continue;
        const unit = ctx.currentUnit(a.target_unit_id);
        if (!unit || unit.retired_at !== null) continue;
        changes.retire.push({ unit_id: unit.id, retired_at: ctx.now, retired_reason: 'superseded', superseded_by: id });
        const [source_id, target_id] = a.action === 'obsolete' ? [unit.id, id] : [id, unit.id];
        changes.edges.push({
          edge_id: ctx.newId(), user_id: plan.user_id, source_id, target_id,
          relation: a.action === 'obsolete' ? 'EvolvedTo' : 'Contradicts', weight: a.confidence, created_at: ctx.now,
        });
        response.affected_unit_ids.push(unit.id);
      }
    }
  }
  return { response, changes };
}
