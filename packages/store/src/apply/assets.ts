/**
 * Who may read an asset's bytes, and when they go (red-team round 3, finding 1). The bytes are stored
 * once per shard, by content hash; access to them is per user: a user *holds* an asset when it gave its
 * bytes (an ingest, or an import's asset line whose hash was checked), and an export emits an asset's
 * bytes only for a user that holds it. An event or unit that merely names an `asset_id` (an imported
 * record, say) gives nothing: knowing a file's hash is not owning it.
 *
 * A hold counts the user's events and units that refer to the asset. The count follows every write of
 * an event or unit record, whatever the command (the writes are read after apply, as effects are), so a
 * hard delete that removes the last of them ends the hold; when no user holds an asset any more, its
 * bytes are deleted. Everything is point reads of replicated state and the command's own writes:
 * deterministic, and usable inside a batched run of ingests.
 */
import type { ApplyContext } from '../apply-context';
import type { StateDb } from '../db';
import { join } from '../keys';
import type { AssetRef } from '../types';

/** The user holds the asset (its bytes stored if they were not). Answers whether the hold is new. */
export async function holdAsset(db: StateDb, ctx: ApplyContext, userId: string, assetId: string, bytes: Buffer): Promise<boolean> {
  if ((await ctx.get(db.assets, assetId)) === undefined) ctx.put(db.assets, assetId, bytes);
  const key = join(userId, assetId);
  if ((await ctx.get(db.assetHolds, key)) !== undefined) return false;
  ctx.put(db.assetHolds, key, 0);
  ctx.put(db.assetHolders, assetId, ((await ctx.get(db.assetHolders, assetId)) ?? 0) + 1);
  return true;
}

/** Stored bytes only: a URL-only asset (size 0) has none to hold. */
const storedIds = (refs: readonly AssetRef[] | undefined): Set<string> => new Set((refs ?? []).filter((a) => a.size > 0).map((a) => a.asset_id));

/**
 * The change in references a command made, per user and asset, collected from its event and unit
 * writes (the record before the command and after it; undefined when absent).
 */
export class AssetReferenceChanges {
  private readonly deltas = new Map<string, { user: string; asset: string; delta: number }>();

  observe(userId: string, before: { assets?: AssetRef[] } | undefined, after: { assets?: AssetRef[] } | undefined): void {
    if (!before?.assets?.length && !after?.assets?.length) return;
    const was = storedIds(before?.assets);
    const is = storedIds(after?.assets);
    for (const id of is) if (!was.has(id)) this.add(userId, id, 1);
    for (const id of was) if (!is.has(id)) this.add(userId, id, -1);
  }

  private add(user: string, asset: string, delta: number): void {
    const key = join(user, asset);
    const entry = this.deltas.get(key);
    if (entry) entry.delta += delta;
    else this.deltas.set(key, { user, asset, delta });
  }

  get empty(): boolean {
    return this.deltas.size === 0;
  }

  /** Moves the holds' counts; a hold left with no reference ends, and an asset nobody holds loses its bytes. */
  async apply(db: StateDb, ctx: ApplyContext): Promise<void> {
    for (const [key, { asset, delta }] of this.deltas) {
      if (delta === 0) continue;
      const refs = await ctx.get(db.assetHolds, key);
      if (refs === undefined) continue; // named without being given: nothing to count
      if (refs + delta > 0) {
        ctx.put(db.assetHolds, key, refs + delta);
        continue;
      }
      ctx.del(db.assetHolds, key);
      const holders = ((await ctx.get(db.assetHolders, asset)) ?? 1) - 1;
      if (holders > 0) {
        ctx.put(db.assetHolders, asset, holders);
      } else {
        ctx.del(db.assetHolders, asset);
        ctx.del(db.assets, asset);
      }
    }
  }
}

/** Whether the user may read the asset's bytes (an export's check). */
export async function holdsAsset(db: StateDb, userId: string, assetId: string, options?: Parameters<StateDb['assetHolds']['get']>[1]): Promise<boolean> {
  return (await db.assetHolds.get(join(userId, assetId), options ?? {})) !== undefined;
}
