/**
 * The MCP tools of CONTRACT §12. Each tool builds the same body its REST route takes, validates it with
 * the same JSON schema (schemas.ts), and calls the same operation (server/src/operations) with the
 * caller's principal: the scope checks, errors and answers are the REST ones. Writes run on the
 * leader of the user's shard, reads on a node holding the user's group (leader.ts).
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { badRequest, StrataError, type ApiKeyRole } from '@strata/store';
import { requireRole, type Principal } from '../auth/principal';
import { ingestEvents } from '../operations/events';
import { executeSemantic, previewSemantic } from '../operations/maintenance';
import { memoryContext, retrieveMemory } from '../operations/retrieval';
import { readyTaskList, taskTrees, updateTaskStatus } from '../operations/tasks';
import type { Body, SchemaName } from '../schemas';
import type { Services } from '../services';
import { checkIdentifier, type Validator } from '../validation';
import type { LeaderGate } from './leader';

/** What a tool call knows about its caller and session. */
export interface ToolCaller {
  principal: Principal;
  /** the credentials headers of the request, for a call sent on to another node (the shard leader, a holder) */
  credentials: Record<string, string>;
  /** the session's stream (one per MCP session) */
  stream_id: string;
  /** the user named when the session started (`--user`, `x-strata-user`), or null */
  default_user: string | null;
}

export interface ToolDeps {
  services: Services;
  validator: Validator;
  leader: LeaderGate;
  /** the caller of the tool call being served (the MCP request carries it: see http.ts) */
  callerOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): ToolCaller;
}

const USER_ID = z.string().min(1).max(256).optional()
  .describe('The user whose memory this is. Leave out when the server knows it (a key for one user, or --user).');
const TIME = z.string().describe('RFC 3339 time, e.g. 2026-03-01T12:00:00Z');

/** The user a call acts on: given, else the session's, else the key's only user. */
export function userOf(given: string | undefined, caller: ToolCaller): string {
  const user = given ?? caller.default_user ?? (caller.principal.user_ids?.length === 1 ? caller.principal.user_ids[0] : null);
  if (user === null) {
    throw badRequest('validation_failed', 'user_id is needed: these credentials are not limited to one user and the session names none (--user).', [{ path: '/user_id', message: 'is required' }]);
  }
  return checkIdentifier(user, '/user_id');
}

function ok(result: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
}

/** A refusal as a tool error the model can read: the envelope's code and message, and the envelope itself. */
function failure(err: unknown, services: Services): CallToolResult {
  const known = err instanceof StrataError;
  if (!known) services.logger.error({ err }, 'MCP tool failed');
  const envelope = known
    ? { error: err.message, code: err.code, ...(err.details ? { details: err.details } : {}) }
    : { error: 'The tool failed on the server; see the server log.', code: 'internal' };
  return { isError: true, content: [{ type: 'text', text: `${envelope.code}: ${envelope.error}` }], structuredContent: envelope };
}

export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { services, validator, leader } = deps;
  // the fields a tool was not given are absent from the body, as in a REST request that leaves them out
  const check = <N extends SchemaName>(name: N, body: Record<string, unknown>) =>
    validator.check<Body<N>>(name, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
  const tool = <S extends z.ZodRawShape>(
    name: string, role: ApiKeyRole, description: string, shape: S,
    run: (input: z.objectOutputType<S, z.ZodTypeAny>, caller: ToolCaller) => Promise<unknown>,
  ) => {
    server.registerTool(name, { description, inputSchema: shape }, (async (input: z.objectOutputType<S, z.ZodTypeAny>, extra: Parameters<ToolDeps['callerOf']>[0]) => {
      try {
        const caller = deps.callerOf(extra);
        requireRole(caller.principal, role);
        return ok(await run(input, caller));
      } catch (err) {
        return failure(err, services);
      }
    }) as never);
  };

  tool('remember', 'write',
    'Store something worth remembering about the user: a fact, a preference, a decision, an outcome. It is saved durably at once and can be recalled immediately; it becomes long-term memory in the background.',
    {
      content: z.string().min(1).describe('What to remember, as a plain sentence (or JSON text with content_type "json").'),
      user_id: USER_ID,
      stream_id: z.string().uuid().optional().describe('The conversation stream (UUID). Default: one stream per MCP session.'),
      content_type: z.enum(['text', 'json', 'image', 'audio', 'video']).optional().describe('Default text. Media: an http(s) URL or base64 data.'),
      org_id: z.string().min(1).max(256).optional().describe('Share this memory with an organization (needs credentials of that organization).'),
      agent_id: z.string().min(1).max(256).optional().describe('The acting agent: the memory becomes procedural for that agent.'),
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const streamId = (input.stream_id ?? caller.stream_id).toLowerCase();
      const event = check('Event', { content: input.content, content_type: input.content_type, org_id: input.org_id, agent_id: input.agent_id });
      const idempotencyKey = randomUUID(); // a retried forward stores the event once
      const answer = await leader.write(userId, caller.credentials,
        async () => ({ status: 'accepted', event_id: (await ingestEvents(services, caller.principal, { user_id: userId, stream_id: streamId, events: [event], idempotency_key: idempotencyKey, batch: false })).event_ids[0] }),
        { method: 'POST', path: `/v1/users/${encodeURIComponent(userId)}/streams/${streamId}/events`, body: event, headers: { 'idempotency-key': idempotencyKey } });
      return { ...answer, user_id: userId, stream_id: streamId };
    });

  tool('recall', 'read',
    "Search the user's memory for what is relevant to a question. Returns ranked memories (most relevant first) with scores in [0, 1]; includes what was said moments ago.",
    {
      query: z.string().min(1).describe('The question or topic, in natural language.'),
      user_id: USER_ID,
      limit: z.number().int().min(1).max(100).optional().describe('How many memories at most (default 10).'),
      as_of: TIME.optional().describe('Answer as the memory stood at this time (RFC 3339).'),
      start_time: TIME.optional().describe('Only memories of things that happened at or after this time.'),
      end_time: TIME.optional().describe('Only memories of things that happened at or before this time.'),
      org_id: z.string().min(1).max(256).optional().describe("Also search this organization's shared knowledge."),
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const request = check('Retrieve', {
        query: input.query, limit: input.limit, as_of: input.as_of, start_time: input.start_time, end_time: input.end_time, org_id: input.org_id,
      });
      return leader.read(userId, caller.credentials, () => retrieveMemory(services, caller.principal, { user_id: userId, stream_id: caller.stream_id, request }),
        { method: 'POST', path: `/v1/users/${encodeURIComponent(userId)}/streams/${caller.stream_id}/retrieve`, body: request });
    });

  tool('get_context', 'read',
    "The user's relevant memories rendered as compact prompt context (text or XML) that fits a token budget: put it in your prompt before answering.",
    {
      query: z.string().min(1).describe('What the next answer is about.'),
      user_id: USER_ID,
      token_budget: z.number().int().min(1).optional().describe('Most tokens the context may use (default 800, clamped to 64..8192).'),
      format: z.enum(['text', 'xml']).optional().describe('Default text.'),
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const request = check('Context', { user_id: userId, query: input.query, token_budget: input.token_budget, format: input.format, stream_id: caller.stream_id });
      return leader.read(userId, caller.credentials, () => memoryContext(services, caller.principal, { request }),
        { method: 'POST', path: '/v1/memory/context', body: request });
    });

  tool('forget', 'write',
    "Plan forgetting what an instruction describes (e.g. 'forget my old address'). Nothing changes yet: the answer lists the memories that would be forgotten and a plan_id; call confirm_forget with it once the user agrees. Plans expire after 15 minutes.",
    {
      instruction: z.string().min(1).max(10_000).describe('What to forget, in natural language.'),
      user_id: USER_ID,
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const body = check('SemanticPreview', { instruction: input.instruction, mode: 'forget' });
      return leader.write(userId, caller.credentials, () => previewSemantic(services, caller.principal, userId, body),
        { method: 'POST', path: `/v1/users/${encodeURIComponent(userId)}/memories/semantic/preview`, body });
    });

  tool('confirm_forget', 'write',
    'Carry out a forget plan exactly as previewed by the forget tool. Only call this after the user agreed to what the preview listed.',
    {
      plan_id: z.string().min(1).max(256).describe('The plan_id the forget tool answered.'),
      user_id: USER_ID,
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const body = check('SemanticExecute', { plan_id: input.plan_id, confirm: true });
      return leader.write(userId, caller.credentials, () => executeSemantic(services, caller.principal, userId, body),
        { method: 'POST', path: `/v1/users/${encodeURIComponent(userId)}/memories/semantic/execute`, body });
    });

  tool('list_tasks', 'read',
    "The user's goals, each with its task tree and statuses; with ready_only, only the pending tasks whose dependencies are all done (what can be worked on next).",
    {
      user_id: USER_ID,
      ready_only: z.boolean().optional().describe('Only tasks ready to start (default false).'),
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const path = `/v1/users/${encodeURIComponent(userId)}/tasks`;
      return input.ready_only
        ? { tasks: await leader.read(userId, caller.credentials, () => readyTaskList(services, caller.principal, { user_id: userId }), { method: 'GET', path: `${path}/ready` }) }
        : { goals: await leader.read(userId, caller.credentials, () => taskTrees(services, caller.principal, { user_id: userId }), { method: 'GET', path: `${path}/tree` }) };
    });

  tool('update_task_status', 'write',
    "Set a task's status (pending, in_progress, blocked, completed, failed, cancelled). Completing a task rolls progress up to its goal and records the outcome in memory.",
    {
      task_id: z.string().min(1).max(256).describe('The task id (from list_tasks), or the id of the event it came from.'),
      status: z.enum(['pending', 'in_progress', 'blocked', 'completed', 'failed', 'cancelled']).describe('The new status.'),
      result_summary: z.string().max(10_000).optional().describe('What came of it (kept with a completed task).'),
      user_id: USER_ID,
    },
    async (input, caller) => {
      const userId = userOf(input.user_id, caller);
      const update = check('TaskStatus', { status: input.status, result_summary: input.result_summary });
      return leader.write(userId, caller.credentials, () => updateTaskStatus(services, caller.principal, { user_id: userId, task_id: input.task_id, update }),
        { method: 'PUT', path: `/v1/users/${encodeURIComponent(userId)}/tasks/${encodeURIComponent(input.task_id)}/status`, body: update });
    });
}
