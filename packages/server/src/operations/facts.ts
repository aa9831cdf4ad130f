/**
 * Facts in (CONTRACT §2 `POST /v1/users/:user_id/facts`): L1 units straight from the caller, planned by
 * memory's `planFacts` (the consolidation correction rule) and proposed as one `memory.consolidate`
 * command that consumes no event: atomic, replicated, and indexed by the same apply effects as any
 * unit (a retrieval after the answer waits for its index refresh). A handed-in fact has no L0 event,
 * so its `references` are empty.
 */
import { randomUUID } from 'node:crypto';
import { consolidation } from '@strata/memory';
import { badRequest, conflict, payloadTooLarge, settle, unitsBySubjectAttribute, withCommandVectors } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Body } from '../schemas';
import type { Services } from '../services';

/** Plans refused as stale (a unit they reinforce changed meanwhile) before the operation answers 409. */
const ATTEMPTS = 3;
const NIL_STREAM = '00000000-0000-0000-0000-000000000000';

export async function addFacts(services: Services, principal: Principal, input: { user_id: string; facts: Body<'Facts'>['facts'] }) {
  const userId = input.user_id;
  const facts = input.facts.map((f) => ({ ...f, stream_id: f.stream_id ? f.stream_id.toLowerCase() : null }));
  await services.scope.authorizeUser(principal, { user_id: userId, org_ids: facts.map((f) => f.org_id), write: true });
  const max = services.config.ingest.max_batch;
  if (facts.length > max) throw payloadTooLarge(`The request has ${facts.length} facts; at most ${max} (ingest.max_batch) are allowed.`);
  facts.forEach((f, i) => {
    if ((f.subject == null) !== (f.attribute == null)) {
      throw badRequest('validation_failed', `/facts/${i}: subject and attribute go together (both or neither).`, [{ path: `/facts/${i}/${f.subject == null ? 'subject' : 'attribute'}`, message: 'is required with the other' }]);
    }
  });
  if (facts.length === 0) return { status: 'accepted' as const, memory_ids: [] as string[] };
  const { db, log } = services.shards.forUser(userId);
  const embedder = services.providers.embedder;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = new Date().toISOString();
    const plan = await consolidation.planFacts({
      user_id: userId, facts, now, newId: randomUUID, default_stream_id: NIL_STREAM, embedder,
      findBySubjectAttribute: (user, subject, attribute) => unitsBySubjectAttribute(db, user, subject, attribute),
    });
    const answer = settle(await log.propose({
      type: 'memory.consolidate', user_id: userId, at: now, consumed: [], embedder_id: embedder.id, method: 'offline',
      units: withCommandVectors(plan.units), reinforced: plan.reinforced, retired: plan.retired, edges: plan.edges, dropped: [],
    }));
    if (answer.applied) return { status: 'accepted' as const, memory_ids: plan.memory_ids };
  }
  throw conflict('The memory these facts correct kept changing while they were being stored; send them again.');
}
