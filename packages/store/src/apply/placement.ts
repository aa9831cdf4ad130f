import type { ApplyContext } from '../apply-context';
import type { GroupPlacementRecord, PlacementCommand } from '../commands';
import type { StateDb } from '../db';
import { failure, StrataError, type ApplyFailure } from '../errors';

/** `meta` key of one group's placement record (zero-padded: the records list in group order). */
export function placementKey(groupId: number): string {
  return `placement\x00${String(groupId).padStart(6, '0')}`;
}

/** `meta` key of the retired groups removed (`cluster.remove_group`, apply/key-ranges.ts): their records are never stored again. */
export const REMOVED_GROUPS_KEY = 'key_removed_groups';

const ids = (v: unknown): v is number[] => Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && n > 0);

/** Pure: why a record cannot be stored (a proposer bug, refused deterministically), or null. */
function invalid(g: GroupPlacementRecord): string | null {
  if (!Number.isSafeInteger(g.group_id) || g.group_id < 0) return 'group_id must be a non-negative integer';
  if (!ids(g.voters) || g.voters.length === 0) return 'voters must be a non-empty list of node ids';
  if (!ids(g.learners)) return 'learners must be a list of node ids';
  if (g.leader !== null && !(Number.isSafeInteger(g.leader) && g.leader > 0)) return 'leader must be a node id or null';
  if (g.drops !== undefined && !(Array.isArray(g.drops) && g.drops.every((d) => ids([d?.node]) && Number.isSafeInteger(d.index) && d.index > 0 && typeof d.url === 'string'))) {
    return 'drops must be a list of {node, index, url}';
  }
  return null;
}

/** `cluster.placement` (see PlacementCommand): each group's record replaces the one stored. */
export async function applyPlacement(db: StateDb, ctx: ApplyContext, cmd: PlacementCommand): Promise<{ groups: number } | ApplyFailure> {
  for (const g of cmd.groups) {
    const why = invalid(g);
    if (why) return failure(new StrataError('invalid_command', `cluster.placement: group ${String(g.group_id)}: ${why}`));
  }
  // a removed group is never placed again (a round that began before the removal may still name it)
  const removed = ((await ctx.get(db.meta, REMOVED_GROUPS_KEY)) as number[] | undefined) ?? [];
  for (const g of cmd.groups) {
    if (removed.includes(g.group_id)) continue;
    // drops only when there are some: a record without them is stored as before they existed
    const drops = g.drops?.length ? { drops: g.drops.map((d) => ({ node: d.node, index: d.index, url: d.url })) } : {};
    ctx.put(db.meta, placementKey(g.group_id), { group_id: g.group_id, voters: g.voters, learners: g.learners, leader: g.leader, move: g.move, ...drops });
  }
  return { groups: cmd.groups.length };
}

/** The placement directory as stored (groups never recorded are absent). */
export async function readPlacement(db: StateDb): Promise<GroupPlacementRecord[]> {
  const out: GroupPlacementRecord[] = [];
  for await (const [, v] of db.meta.iterator({ gt: 'placement\x00', lt: 'placement\x01' })) out.push(v as GroupPlacementRecord);
  return out;
}
