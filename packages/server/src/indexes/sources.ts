/**
 * What one retrieval searches, from the sets it reads: the user's indexes, the org's sets, the pending
 * events searched raw. One function for the main thread and the index worker (indexes/worker/), so a
 * query ranks the same wherever the user's indexes are held.
 */
import { retrieval } from '@strata/memory';
import type { MemoryUnit } from '@strata/store';
import type { TextIndex, VectorIndex } from '@strata/store/indexes';

const { findNearDuplicates, TEXT_FIELDS } = retrieval;
type UnitSet = retrieval.UnitSet;
type UserIndex = retrieval.UserIndex;
type RawHit = retrieval.RawHit;

/** What a retrieval ranks: the indexes' records (slim, or whole for org units sent by another node) and raw hits. */
export type Ranked = retrieval.IndexedRecord | MemoryUnit | RawHit;

/**
 * One result per source event (see FusionOptions.collapseKey): of the L1 units split out of one turn,
 * and of those units and the raw hit of that turn (an event consolidated while a query read it is in
 * both the pending set and the index; a raw hit's references are [its event id]).
 */
export const collapseBySource = (u: { level: number; user_id: string; references?: string[] }): string | null =>
  u.level <= 1 && u.references && u.references.length > 0 ? `${u.user_id}\u0000${u.references[0]}` : null;

export interface SourceSets {
  user: UserIndex;
  /** the org's non-empty sets, in shard order */
  orgs: UnitSet[];
  pending: retrieval.PendingSet | null;
  scope: string;
  streamId: string | null;
  /** the query image's perceptual hash, if one was sent */
  queryHash: string | null;
}

export function retrievalSources({ user, orgs, pending, scope, streamId, queryHash }: SourceSets): retrieval.RetrievalSources<Ranked> {
  const userUnits = user.units; // read once: called for every candidate of every list
  const getUnit = (id: string): Ranked | undefined => {
    const own = userUnits.get(id);
    if (own) return own;
    for (const o of orgs) {
      const u = o.units.get(id);
      if (u) return u;
    }
    return pending?.hits.get(id);
  };
  const raw = pending && pending.size > 0 ? [pending] : [];
  const sources: retrieval.RetrievalSources<Ranked> = {
    vectorIndexes: [user.vector, ...orgs.map((o) => o.vector), ...raw.map((p) => p.vector)] as VectorIndex[],
    textIndexes: [user.text, ...orgs.map((o) => o.text), ...raw.map((p) => p.text)] as TextIndex[],
    getUnit,
    neighbors: user.neighbors,
    outdatedInsight: (id) => user.outdatedInsights.known(id),
    fieldTextIndexes: TEXT_FIELDS.map((name) => ({
      name, indexes: [user.fields[name], ...orgs.map((o) => o.fields[name]), ...(name === 'own' ? raw.map((p) => p.own) : [])],
    })),
  };
  if (scope === 'stream') {
    sources.restrictTo = new Set([...(user.byStream.get(streamId!) ?? []), ...(pending?.byStream.get(streamId!) ?? [])]);
  }
  if (queryHash) {
    const candidates = [user, ...orgs].flatMap((s) => [...s.images].flatMap(([id, hashes]) => hashes.map((phash) => ({ id, phash }))));
    sources.imageMatches = findNearDuplicates(queryHash, candidates);
  }
  return sources;
}

/** The pending events of one query as a set searched raw (`vectors[i]` is hit i's, null when not embedded). */
export function pendingSetOf(dimensions: number, hits: readonly retrieval.RawHit[], vectors: readonly (Float32Array | null)[]): retrieval.PendingSet {
  const set = new retrieval.PendingSet(dimensions);
  hits.forEach((hit, i) => set.add(hit, vectors[i] ?? null));
  return set;
}
