/**
 * `strata mcp`: the node's MCP tools (docs/api.md §12) over stdio, for desktop and coding agents that launch
 * a command. A bridge, not a second implementation: each JSON-RPC message read on stdin goes to the
 * node's streamable HTTP endpoint (`<url>/mcp`, with the key and `--user`), and each message the node
 * sends comes back on stdout, through the official SDK's transports. stdout carries the protocol only;
 * anything for a person goes to stderr.
 */
import type { Command } from 'commander';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { checkUrl, globalsOf } from '../context';
import { UsageError } from '../errors';

/** Names the session's default user on the node (packages/server/src/mcp/mount.ts MCP_USER_HEADER). */
const USER_HEADER = 'x-strata-user';

function requestId(message: JSONRPCMessage): string | number | null {
  return 'method' in message && 'id' in message ? (message.id as string | number) : null;
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description("serve the node's MCP tools over stdio (add this command to an agent's MCP configuration)")
    .option('--user <user_id>', 'the user the tools act on when a call names none')
    .action(async (options: { user?: string }, command: Command) => {
      const g = globalsOf(command);
      const url = checkUrl(g.url);
      if (!g.apiKey) throw new UsageError('strata mcp needs credentials: --api-key or STRATA_API_KEY.');
      // The SDK is loaded only by this command: it is most of what the CLI would otherwise load at every start.
      const [{ StreamableHTTPClientTransport }, { StdioServerTransport }] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
      ]);
      const headers: Record<string, string> = { 'x-api-key': g.apiKey, ...(options.user ? { [USER_HEADER]: options.user } : {}) };
      const remote = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
      const local = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        let closing = false;
        // Once: closing a transport calls its own onclose, which lands here again (the loop filled stderr
        // with "Maximum call stack size exceeded" on every disconnect).
        const close = () => {
          if (closing) return;
          closing = true;
          void Promise.allSettled([remote.close(), local.close()]).then(() => resolve());
        };
        local.onclose = close;
        remote.onclose = close;
      });
      remote.onerror = (err) => process.stderr.write(`strata mcp: ${err.message}\n`);
      local.onerror = (err) => process.stderr.write(`strata mcp: ${err.message}\n`);
      remote.onmessage = (message) => {
        // the protocol version the node agreed to travels on every later request, as the SDK client does
        const result = 'result' in message ? (message.result as { protocolVersion?: unknown }) : null;
        if (result && typeof result.protocolVersion === 'string') remote.setProtocolVersion(result.protocolVersion);
        void local.send(message);
      };
      local.onmessage = (message) => {
        remote.send(message).catch((err: Error) => {
          process.stderr.write(`strata mcp: ${url}/mcp: ${err.message}\n`);
          const id = requestId(message);
          // a request must be answered: the agent gets the failure instead of waiting forever
          if (id !== null) void local.send({ jsonrpc: '2.0', id, error: { code: -32000, message: `Strata node ${url} did not answer: ${err.message}` } });
        });
      };
      await remote.start();
      await local.start();
      process.stdin.once('end', () => void local.close());
      await closed;
    });
}
