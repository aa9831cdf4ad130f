/** `strata cluster status|init|join|remove|split|merge` (docs/api.md §10; admin key). */
import type { Command } from 'commander';
import type { ClusterAbortResponse, ClusterStatus } from '@strata/client';
import { connected } from '../context';
import { integerIn } from '../parse';

const nodeId = integerIn(1, 999_999_999);
const groupId = integerIn(0, 255);
const keyPoint = integerIn(1, 2 ** 40);

function abortedLine(a: ClusterAbortResponse): string {
  return 'split' in a ? `split of shard ${a.split.group} at ${a.split.point} aborted` : `merge of shard ${a.merge.with} into shard ${a.merge.group} aborted`;
}

export function clusterLines(status: ClusterStatus): string[] {
  const held = status.shards.filter((s) => s.holds);
  const round = status.placement?.last_round ?? null;
  return [
    `cluster  node ${status.node_id}, ${status.shards.length} shard group(s), ${held.length} held here`,
    ...held.flatMap((s) => [
      `  shard ${s.shard_id}: this node ${s.role}, leader ${s.leader === null ? 'unknown' : `node ${s.leader}`}, term ${s.term}, commit ${s.commit_index}, applied ${s.applied_index}`,
      ...s.members.map((m) => `    node ${m.node_id} ${m.url ?? '(no address)'} ${m.voter ? 'voter' : 'learner'}, match ${m.match_index ?? '-'}`),
    ]),
    ...(status.placement && status.placement.groups.length > 0 ? [
      `placement  replication factor ${status.placement.replication_factor}` +
        (round ? `; last round ${round.at}: ${round.steps.length} step(s), ${round.moves_in_flight} move(s) in flight, ${round.under_replicated} group(s) short of replicas` : ''),
      ...status.placement.groups.map((g) => `  shard ${g.group_id}: voters ${g.voters.join(',')}${g.learners.length ? `, learners ${g.learners.join(',')}` : ''}` +
        `, leader ${g.leader ?? 'unknown'}${g.move ? `, moving to node ${g.move.to}${g.move.from === null ? '' : ` from node ${g.move.from}`} (${g.move.reason})` : ''}`),
    ] : []),
  ];
}

export function registerCluster(program: Command): void {
  const cluster = program.command('cluster').description('cluster membership (admin key)');

  cluster
    .command('status')
    .description("this node's view of the shard groups it holds (leader, term, role, indexes, members) and the placement of all")
    .action(connected(async ({ client, out }) => {
      const status = await client.clusterStatus();
      out.result(status, () => clusterLines(status));
    }));

  cluster
    .command('init')
    .description('initialize shard 0 with the configured members and every other group on its initial voters (idempotent; for raft.auto_initialize = false)')
    .action(connected(async ({ client, out }) => {
      const answer = await client.clusterInitialize();
      out.result(answer, () => [`${answer.status.replace('_', ' ')} (node ${answer.node_id}): ${answer.shards.map((s) => `shard ${s.shard_id} ${s.status.replace('_', ' ')}`).join(', ')}`]);
    }));

  cluster
    .command('join')
    .description('add a node to the cluster (shard 0: learner, then voter); the placement then moves replicas to it')
    .argument('<node_id>', 'the new node\'s id (a positive integer)', nodeId)
    .argument('<address>', "the new node's peer URL, e.g. http://10.0.0.4:3000")
    .action(connected(async ({ client, out }, command) => {
      const [id, address] = command.processedArgs as [number, string];
      const answer = await client.clusterJoin(id, address);
      out.result(answer, () => [`node ${answer.node_id} ${answer.status.replace('_', ' ')} as ${answer.role}: ${answer.shards.map((s) => `shard ${s.shard_id} ${s.status.replace('_', ' ')}`).join(', ')}`]);
    }));

  cluster
    .command('split')
    .description("split a shard group's key range: the upper half becomes a new group (seeded, then routed to it, then deleted from the group); `cluster status` shows the progress")
    .argument('<group>', 'the shard group to split', groupId)
    .option('--point <key>', "where the upper half starts (default: the median of the group's users' keys; `cluster status` shows the ranges)", keyPoint)
    .option('--abort', 'abort the split of the group in flight instead (not once committed): its groups are put back')
    .action(connected(async ({ client, out }, command) => {
      const [group] = command.processedArgs as [number];
      const { point, abort } = command.opts() as { point?: number; abort?: boolean };
      if (abort) {
        const answer = await client.clusterSplitAbort(group);
        return out.result(answer, () => [`${abortedLine(answer)} (${answer.status.replace('_', ' ')})`]);
      }
      const answer = await client.clusterSplit(group, point);
      out.result(answer, () => [`shard ${answer.split.group} split at ${answer.split.point}: the upper half goes to shard ${answer.split.new_group} (${answer.status.replace('_', ' ')})`]);
    }));

  cluster
    .command('merge')
    .description("merge a neighbouring shard group (adjacent key range) into a group: its records are copied, its range routed to the group, then its copy deleted and its id retired; `cluster status` shows the progress")
    .argument('<group>', 'the shard group that stays', groupId)
    .option('--with <group>', 'the shard group merged into it', groupId)
    .option('--abort', 'abort the merge into the group in flight instead (not once committed): its groups are put back')
    .action(connected(async ({ client, out }, command) => {
      const [group] = command.processedArgs as [number];
      const opts = command.opts() as { with?: number; abort?: boolean };
      if (opts.abort) {
        const answer = await client.clusterMergeAbort(group);
        return out.result(answer, () => [`${abortedLine(answer)} (${answer.status.replace('_', ' ')})`]);
      }
      if (opts.with === undefined) command.error('error: --with <group> is required (the group merged into this one)', { exitCode: 2 });
      const answer = await client.clusterMerge(group, opts.with!);
      out.result(answer, () => [`shard ${answer.merge.with} merges into shard ${answer.merge.group}: keys ${answer.merge.start} to ${answer.merge.end} (${answer.status.replace('_', ' ')})`]);
    }));

  cluster
    .command('remove')
    .description('remove a node from the cluster (shard 0); the placement then drains its replicas of the other groups')
    .argument('<node_id>', "the node's id", nodeId)
    .action(connected(async ({ client, out }, command) => {
      const [id] = command.processedArgs as [number];
      const answer = await client.clusterRemove(id);
      out.result(answer, () => [`node ${answer.node_id} removed: ${answer.shards.map((s) => `shard ${s.shard_id} ${s.status.replace('_', ' ')}`).join(', ')}`]);
    }));
}
