/**
 * Strata as memory tools for the Vercel AI SDK: `remember` stores what the model decides is worth
 * keeping (an event, durable when the call returns), `recall` searches the user's memory (found at once,
 * before consolidation). Give them to generateText/streamText with any model:
 *
 *   const client = new StrataClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.STRATA_API_KEY });
 *   const { text } = await generateText({ model, tools: strataTools({ client, userId: 'alice' }),
 *     stopWhen: stepCountIs(5), prompt: 'Remember that I moved to Lisbon, then tell me where I live.' });
 */
import { tool } from 'ai';
import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import type { StrataClient } from '@strata/client';

export interface StrataToolsOptions {
  client: StrataClient;
  userId: string;
  /** the conversation's stream; default a new one per set of tools */
  streamId?: string;
  /** results recall returns at most (default 5) */
  limit?: number;
}

export function strataTools({ client, userId, streamId = randomUUID(), limit = 5 }: StrataToolsOptions) {
  return {
    remember: tool({
      description: 'Store a fact about the user or the task in long-term memory, in one plain sentence.',
      inputSchema: z.object({
        content: z.string().min(1).describe('what to remember, as a sentence'),
        happened_at: z.string().datetime().optional().describe('when it happened (RFC 3339), if not now'),
      }),
      execute: async ({ content, happened_at }) => {
        const { event_id } = await client.ingest(userId, streamId, { content, role: 'user', valid_time: happened_at ?? null });
        return { stored: true, event_id };
      },
    }),
    recall: tool({
      description: 'Search long-term memory about the user; returns the best matching memories, most relevant first.',
      inputSchema: z.object({
        query: z.string().min(1).describe('what to look for'),
        from: z.string().datetime().optional().describe('only things that happened from then on (RFC 3339)'),
        to: z.string().datetime().optional().describe('only things that happened until then (RFC 3339)'),
      }),
      execute: async ({ query, from, to }) => {
        const answer = await client.retrieve(userId, streamId, { query, limit, start_time: from ?? null, end_time: to ?? null });
        return answer.results.map(({ unit, score }) => ({ content: unit.content, score: Number(score.toFixed(3)), happened: unit.valid_time }));
      },
    }),
  };
}
