/**
 * Mounts MCP at `/mcp` without loading it: the MCP SDK and zod (what http.ts and tools.ts import) took
 * about a quarter of a node's module loading at start, for an endpoint many nodes never serve. The
 * first request to /mcp requires http.ts (a one-time cost of that request) and every request after it
 * goes straight to the endpoint it built.
 */
import type { Express, NextFunction, Request, Response } from 'express';
import type { AuthService } from '../auth/service';
import type { Services } from '../services';
import type { Validator } from '../validation';
import type { LeaderGate } from './leader';

export const MCP_PATH = '/mcp';
/** Names the session's default user (what `strata mcp --user` sends). */
export const MCP_USER_HEADER = 'x-strata-user';

export interface McpEndpointOptions {
  services: Services;
  auth: AuthService;
  validator: Validator;
  leader: LeaderGate;
  bodyLimit: number;
}

type Endpoint = ReturnType<typeof import('./http').mcpEndpoint>;

export function mountMcp(app: Express, options: McpEndpointOptions): { close(): Promise<void> } {
  let endpoint: Endpoint | null = null;
  const load = (): Endpoint => {
    // require, not import(): synchronous, so two first requests arriving together build one endpoint
    endpoint ??= (require('./http') as typeof import('./http')).mcpEndpoint(options);
    return endpoint;
  };
  for (const method of ['post', 'get', 'delete'] as const) {
    app[method](MCP_PATH, (req: Request, res: Response, next: NextFunction) => {
      res.locals.route = MCP_PATH;
      let handle: Endpoint['handle'];
      try {
        handle = load().handle;
      } catch (err) {
        return next(err);
      }
      handle(req, res).catch(next);
    });
  }
  // never loaded: no session to close
  return { close: async () => endpoint?.close() };
}
