/**
 * MCP over streamable HTTP at `/mcp` (CONTRACT §12), with the official SDK's transport. Every request
 * is authenticated like `/v1` (x-api-key or Bearer); a session belongs to the credentials that opened
 * it, and its tools act with the principal of each request (a revoked key stops working at once).
 * Sessions are stateful (a stream per session) and bounded (sessions.ts).
 *
 * This module loads the SDK (and zod): mount.ts requires it on the first request to /mcp, so a node
 * that is never asked for MCP does not pay for loading them at start.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import { jsonBodyReader } from '../http/body';
import { checkIdentifier } from '../validation';
import { MCP_USER_HEADER, type McpEndpointOptions } from './mount';
import { SessionTable, type HeldSession } from './sessions';
import { registerTools, type ToolCaller } from './tools';

interface McpSession extends HeldSession {
  transport: StreamableHTTPServerTransport;
  stream_id: string;
  default_user: string | null;
}

/** A JSON-RPC error answer, as MCP clients expect from the transport. */
function rpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: status === 404 ? -32001 : -32000, message }, id: null });
}

function credentialsOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-api-key']) {
    const v = req.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/**
 * Where an MCP request may come from (the MCP transport's rule against DNS rebinding): a request that
 * carries `Origin` (a browser's) is refused unless the origin is in `mcp.allowed_origins` (none by
 * default: MCP clients that are not browsers send none); with `mcp.allowed_hosts` set, a `Host`
 * outside it is refused too. Answers the refusal's message, or null.
 */
export function requestSourceCheck(config: { allowed_origins: string[]; allowed_hosts: string[] }): (req: Request) => string | null {
  const origins = new Set(config.allowed_origins.map((o) => o.toLowerCase().replace(/\/+$/, '')));
  const hosts = new Set(config.allowed_hosts.map((h) => h.toLowerCase()));
  return (req) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) {
      return `Origin ${JSON.stringify(origin)} may not use MCP on this node (mcp.allowed_origins).`;
    }
    if (hosts.size > 0 && !hosts.has((req.headers.host ?? '').toLowerCase())) {
      return `Host ${JSON.stringify(req.headers.host ?? '')} is not one this node serves MCP as (mcp.allowed_hosts).`;
    }
    return null;
  };
}

/** The /mcp endpoint: `handle` answers one request (any method), `close` ends every session. */
export function mcpEndpoint(options: McpEndpointOptions): { handle(req: Request, res: Response): Promise<void>; close(): Promise<void> } {
  const { services, auth } = options;
  const { max_sessions, max_sessions_per_key, session_idle_s } = services.config.mcp;
  const sessions = new SessionTable<McpSession>({ max: max_sessions, perOwner: max_sessions_per_key, idleMs: session_idle_s * 1000 });
  const refusal = requestSourceCheck(services.config.mcp);
  const readBody = jsonBodyReader(options.bodyLimit);

  const openSession = async (principal: Principal, req: Request): Promise<McpSession> => {
    const header = req.headers[MCP_USER_HEADER];
    const defaultUser = typeof header === 'string' && header !== '' ? checkIdentifier(header, `header:${MCP_USER_HEADER}`) : null;
    const server = new McpServer({ name: 'strata', version: '1.0.0' }, {
      instructions: 'Long-term memory for this user: call recall or get_context before answering questions about the user, remember for facts worth keeping, forget then confirm_forget to delete.',
    });
    const session: McpSession = {
      owner: `${principal.kind}:${principal.subject}`,
      stream_id: randomUUID(),
      default_user: defaultUser,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.add(id, session),
        onsessionclosed: (id) => sessions.remove(id),
      }),
      close: async () => {
        await session.transport.close();
        await server.close();
      },
    };
    registerTools(server, {
      services, validator: options.validator, leader: options.leader,
      callerOf: (extra): ToolCaller => {
        const call = extra.authInfo?.extra as { principal: Principal; credentials: Record<string, string> } | undefined;
        if (!call) throw new Error('an MCP tool ran without the caller of its request');
        return { principal: call.principal, credentials: call.credentials, stream_id: session.stream_id, default_user: session.default_user };
      },
    });
    await server.connect(session.transport);
    return session;
  };

  const handle = async (req: Request, res: Response) => {
    // Before credentials: a page in a browser must not reach the tools through the user's own network (DNS rebinding).
    const refused = refusal(req);
    if (refused) return rpcError(res, 403, refused);
    const key = req.headers['x-api-key'];
    const principal = await auth.authenticate(req.headers.authorization, Array.isArray(key) ? key[0] : key);
    await readBody(req, res);
    const id = req.headers['mcp-session-id'];
    let session: McpSession | undefined;
    if (typeof id === 'string') {
      session = sessions.use(id, `${principal.kind}:${principal.subject}`);
      if (!session) return rpcError(res, 404, 'Session not found (closed, expired or opened with other credentials); start a new session.');
    } else if (req.method === 'POST' && isInitializeRequest(req.body)) {
      session = await openSession(principal, req);
    } else {
      return rpcError(res, 400, 'Start a session with an initialize request, then send its Mcp-Session-Id header.');
    }
    const authInfo = { token: '', clientId: principal.subject, scopes: [principal.role], extra: { principal, credentials: credentialsOf(req) } };
    await session.transport.handleRequest(Object.assign(req, { auth: authInfo }), res, req.body);
  };

  return { handle, close: () => sessions.closeAll() };
}
