/**
 * The official MCP SDK client over Streamable HTTP against a node's `/mcp`, as an agent connects: the
 * tests drive the tools through it rather than through hand-made JSON-RPC, so they see what clients see.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** What a tool call answers: a tool error carries the REST error envelope in structuredContent. */
export type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** Opens a session with these headers (credentials, `x-strata-user`); rejects when the node refuses it. */
export async function connectMcp(baseUrl: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'strata-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}
