/**
 * `strata ingest [file]`: events from a file or stdin (NDJSON or plain lines) into one stream of one
 * user, in batches through the batch route, each with its Idempotency-Key (ingest/batches.ts).
 */
import { randomUUID } from 'node:crypto';
import { Option, type Command } from 'commander';
import { StrataApiError } from '@strata/client';
import { connected } from '../context';
import { Annotated } from '../errors';
import { inBatches, type Batch } from '../ingest/batches';
import { countEvents, openInput, readEvents, type InputFormat } from '../ingest/input';
import { createProgress } from '../ingest/progress';
import { sendBatch } from '../ingest/send';
import { waitForMemory } from '../ingest/wait';
import { integerIn, uuid } from '../parse';

/** Half the server's default body limit (server.body_limit, 2 MiB): room for JSON escaping and headers. */
const MAX_BATCH_BYTES = 1024 * 1024;

interface IngestOptions {
  user: string;
  stream?: string;
  format: InputFormat;
  batchSize: number;
  org?: string;
  agent?: string;
  wait?: boolean;
  waitTimeout: number;
}

export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('send events from a file or stdin: NDJSON (an event object a line), plain text (a text event a line), or a chat export (a JSON array [{role, content, name?, timestamp?}], one event a message)')
    .argument('[file]', 'the input file; none or - reads stdin')
    .requiredOption('--user <user_id>', 'the user the events belong to')
    .option('--stream <stream_id>', 'the stream (a UUID) to add the events to (default: a new one, printed)', uuid)
    .addOption(new Option('--format <format>', 'auto: a chat export when the input starts with "[", NDJSON when the first line is a JSON object, else text').choices(['auto', 'ndjson', 'text', 'chat']).default('auto'))
    .option('--batch-size <n>', 'events per request (the server takes at most ingest.max_batch, 1000 by default)', integerIn(1, 100_000), 100)
    .option('--org <org_id>', 'org_id for events that name none')
    .option('--agent <agent_id>', 'agent_id for events that name none')
    .option('--wait', 'then show consolidation progress until the events are memory (the backlog the key sees is empty)')
    .option('--wait-timeout <seconds>', 'give up waiting after this long (exit 1; the events stay accepted)', integerIn(1, 86_400), 600)
    .action(connected(async ({ client, out, json }, command) => {
      const [file] = command.processedArgs as [string | undefined];
      const o = command.opts<IngestOptions>();
      const input = openInput(file);
      const user = o.user;
      const stream = o.stream ?? randomUUID();
      if (!o.stream && !json) process.stderr.write(`ingest: into a new stream ${stream}\n`);
      const progress = createProgress({ total: input.path === null ? null : await countEvents(input.path), stream: process.stderr });
      const defaults = { ...(o.org ? { org_id: o.org } : {}), ...(o.agent ? { agent_id: o.agent } : {}) };
      let accepted = 0;
      let batches = 0;
      let current: Batch | null = null;
      try {
        for await (const batch of inBatches(readEvents(input.stream, o.format, defaults), o.batchSize, MAX_BATCH_BYTES)) {
          current = batch;
          accepted += (await sendBatch(client, { user, stream }, batch)).length;
          batches++;
          progress.advance(batch.lines.length);
        }
      } catch (err) {
        progress.abort();
        throw annotate(err, current, { user, stream, accepted });
      }
      progress.finish();
      const memory = o.wait ? await waitForMemory(client, { timeoutMs: o.waitTimeout * 1000, stream: process.stderr }) : undefined;
      out.result({ status: 'accepted', user_id: user, stream_id: stream, count: accepted, batches, ...(memory ? { memory } : {}) }, () => [
        `accepted ${accepted} event(s) into stream ${stream} of user ${user} (${batches} batch${batches === 1 ? '' : 'es'})`,
        ...(memory ? [`consolidated: nothing waits${memory.failed ? `; ${memory.failed} event(s) failed (GET /v1/status/failed)` : ''}`] : []),
      ]);
    }));
}

/** What was accepted before the failure, which input lines a refusal names, and how to carry on. */
function annotate(err: unknown, batch: Batch | null, at: { user: string; stream: string; accepted: number }): Annotated {
  const notes: string[] = [];
  if (batch && err instanceof StrataApiError) {
    const kind = batch.messages ? 'messages' : 'events';
    const indexes = new Set((err.details ?? []).map((d) => new RegExp(`^/${kind}/(\\d+)`).exec(d.path)?.[1]).filter((i): i is string => i !== undefined));
    for (const i of indexes) {
      if (batch.lines[Number(i)] !== undefined) notes.push(`  /${kind}/${i} is ${batch.messages ? 'message' : 'line'} ${batch.lines[Number(i)]} of the input`);
    }
    if (indexes.size === 0 && (err.status === 400 || err.status === 413)) notes.push(`  the refused batch holds lines ${batch.lines[0]}-${batch.lines[batch.lines.length - 1]} of the input`);
  }
  if (at.accepted === 0) notes.push('Nothing was stored.');
  else {
    notes.push(`${at.accepted} event(s) were accepted into stream ${at.stream} of user ${at.user} before this.`);
    notes.push(`Re-running the same input with --stream ${at.stream} carries on: accepted batches are not stored twice.`);
  }
  return new Annotated(err, notes, { user_id: at.user, stream_id: at.stream, accepted: at.accepted });
}
