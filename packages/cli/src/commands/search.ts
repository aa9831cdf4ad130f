/** `strata search <query>`: the user's memories that best answer a query, ranked (docs/api.md §3). */
import type { Command } from 'commander';
import type { RetrieveRequest } from '@strata/client';
import { connected } from '../context';
import { UsageError } from '../errors';
import { integerIn, numberIn, uuid } from '../parse';

/**
 * The retrieve route is under a stream; searching the user's whole memory (scope `user`) needs none in
 * particular, so the nil UUID stands in (no stream has it, so none gets the current-stream boost).
 */
const NO_STREAM = '00000000-0000-0000-0000-000000000000';

interface SearchOptions {
  user: string;
  stream?: string;
  onlyStream?: boolean;
  limit?: number;
  minScore?: number;
  graphDepth?: number;
  asOf?: string;
  startTime?: string;
  endTime?: string;
  from?: string;
  to?: string;
  org?: string;
  agent?: string;
  arbitrate?: boolean;
  linearizable?: boolean;
}

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description("retrieve the user's memories that best answer a query, ranked")
    .argument('<query...>', 'what to search for')
    .requiredOption('--user <user_id>', 'whose memory to search')
    .option('--stream <stream_id>', 'favour this stream (a UUID); with --only-stream, search only it', uuid)
    .option('--only-stream', 'search only --stream')
    .option('--limit <n>', 'results wanted (server default 10)', integerIn(1, 10_000))
    .option('--min-score <score>', 'drop results scoring below it (0..1)', numberIn(0, 1))
    .option('--graph-depth <n>', 'hops of graph expansion (server default 1, capped at 3)', integerIn(0, 100))
    .option('--from <time>', 'WHEN IT HAPPENED (valid time, RFC 3339): only things that happened from then on (start_time)')
    .option('--to <time>', 'WHEN IT HAPPENED (valid time, RFC 3339): only things that happened until then (end_time)')
    .option('--start-time <time>', 'the same as --from')
    .option('--end-time <time>', 'the same as --to')
    .option('--as-of <time>', 'WHAT THE MEMORY HELD THEN (storage time, RFC 3339): units stored later are hidden, so imported history is hidden before its import (as_of)')
    .option('--org <org_id>', "let this organization's knowledge into the results")
    .option('--agent <agent_id>', "favour this agent's procedural memory")
    .option('--arbitrate', 'keep only the current version of facts that changed')
    .option('--linearizable', "wait for the leader's commit index first (read what was just written anywhere)")
    .action(connected(async ({ client, out }, command) => {
      const query = (command.processedArgs[0] as string[]).join(' ');
      const o = command.opts<SearchOptions>();
      if (o.onlyStream && !o.stream) throw new UsageError('--only-stream needs --stream.');
      if (o.from !== undefined && o.startTime !== undefined) throw new UsageError('--from and --start-time are the same option: give one.');
      if (o.to !== undefined && o.endTime !== undefined) throw new UsageError('--to and --end-time are the same option: give one.');
      const request: RetrieveRequest = {
        query, limit: o.limit, min_score: o.minScore, graph_depth: o.graphDepth, as_of: o.asOf, start_time: o.from ?? o.startTime, end_time: o.to ?? o.endTime,
        org_id: o.org, agent_id: o.agent, enable_arbitration: o.arbitrate, scope: o.onlyStream ? 'stream' : 'user',
        consistency: o.linearizable ? 'linearizable' : undefined,
      };
      const answer = await client.retrieve(o.user, o.stream ?? NO_STREAM, request);
      out.result(answer, () => (answer.results.length === 0 ? ['no memories match'] : answer.results.flatMap(({ unit, score }, i) => [
        `${i + 1}. ${score.toFixed(3)}  ${unit.content}`,
        `   L${unit.level} ${unit.memory_type}, happened ${unit.valid_time} (stored ${unit.transaction_time}), id ${unit.id}`,
      ])));
    }));
}
