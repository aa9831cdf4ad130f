/**
 * `npx strata mcp` (CONTRACT §12): the same tools over stdio, driven by the official SDK's client
 * launching the real binary against a real node, as a desktop or coding agent does.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StrataClient } from '@strata/client';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'mcp-stdio-test-admin-key';
type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

describe('strata mcp over stdio', () => {
  let server: ServerProcess;
  let admin: StrataClient;

  const launch = async (args: string[]) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO_ROOT, 'packages/cli/bin/strata.js'), 'mcp', '--url', server.url, ...args],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'strata-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('lists the tools, remembers for --user and recalls it at once', async () => {
    const client = await launch(['--api-key', KEY, '--user', 'nora']);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort())
        .toEqual(['confirm_forget', 'forget', 'get_context', 'list_tasks', 'recall', 'remember', 'update_task_status']);
      const remembered = (await client.callTool({ name: 'remember', arguments: { content: 'Nora is allergic to kiwi.' } })) as ToolResult;
      expect(remembered.structuredContent).toMatchObject({ status: 'accepted', user_id: 'nora' });
      const eventId = remembered.structuredContent!.event_id as string;
      const recalled = (await client.callTool({ name: 'recall', arguments: { query: 'What is Nora allergic to?' } })) as ToolResult;
      const results = recalled.structuredContent!.results as { unit: { references: string[] } }[];
      expect(results[0].unit.references).toContain(eventId);
      expect((await admin.pending()).failed).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('passes refusals through as tool errors', async () => {
    const key = (await admin.createApiKey({ user_ids: ['nora'], role: 'read' })).key;
    const client = await launch(['--api-key', key]);
    try {
      const refused = (await client.callTool({ name: 'remember', arguments: { content: 'not allowed' } })) as ToolResult;
      expect([refused.isError, refused.structuredContent!.code]).toEqual([true, 'forbidden']);
      const other = (await client.callTool({ name: 'recall', arguments: { user_id: 'omar', query: 'anything' } })) as ToolResult;
      expect([other.isError, other.structuredContent!.code]).toEqual([true, 'forbidden']);
    } finally {
      await client.close();
    }
  });

  it('exits quietly when the agent disconnects (closing once, not in a loop)', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'packages/cli/bin/strata.js'), 'mcp', '--url', server.url, '--api-key', KEY], {
      cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    const firstAnswer = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    await firstAnswer;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.end();
    const code = await exited;
    expect(stderr).not.toMatch(/Maximum call stack/);
    expect(stderr.length).toBeLessThan(2000);
    expect(code).toBe(0);
  });
});
