/**
 * What a node loads at start and what it leaves until first used (issue 29: /readyz within 2 s). The
 * MCP SDK (with zod), the OpenTelemetry SDK and OTLP exporter, js-tiktoken's other encodings and undici
 * took about half of a start's module loading; a node loads them only when a request reaches /mcp, when
 * it traces, when an encoding is asked for, when it first sends to another node or a webhook. Each case runs a real node process with a preload that
 * writes the files it loaded when it exits (test/helpers/loaded-modules.js), and checks that what is
 * loaded late still works on its first use.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StrataClient } from '@strata/client';
import { waitFor } from '../helpers/cluster';
import { connectMcp } from '../helpers/mcp-client';
import { KIND, OtlpCollector } from '../helpers/otlp-collector';
import { REPO_ROOT, removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const KEY = 'start-modules-admin-key';
const PRELOAD = ['--require', join(REPO_ROOT, 'test/helpers/loaded-modules.js')];

/** A node with the preload; `loaded()` (after `stop()`) lists the packages and files it had loaded. */
async function start(env: Record<string, string> = {}): Promise<{ server: ServerProcess; loaded: () => string[] }> {
  const dir = tempDir();
  const list = join(dir, 'loaded-modules.txt');
  const server = await startServer({ dataDir: join(dir, 'data'), nodeArgs: PRELOAD, env: { STRATA_API_KEY: KEY, STRATA_TEST_LOADED_MODULES: list, ...env } });
  return {
    server,
    loaded: () => {
      const files = readFileSync(list, 'utf8').split('\n').filter(Boolean);
      removeDir(dir);
      return files;
    },
  };
}

const has = (files: string[], part: string) => files.some((f) => f.includes(part));

describe('modules loaded at start', () => {
  it('leaves the MCP SDK, the tracing SDK, the other encodings and undici unloaded until used', async () => {
    const { server, loaded } = await start();
    const client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    // the context route counts tokens: the tokenizer is built (in the background since the start) and answers
    const reply = await client.raw('POST', '/v1/memory/context', { body: { user_id: 'u1', query: 'anything', token_budget: 200 } });
    expect(reply.status).toBe(200);
    await client.close();
    expect(await server.stop()).toBe(0);
    const files = loaded();
    expect(has(files, '/node_modules/express/')).toBe(true); // the list is real
    expect(has(files, '/js-tiktoken/dist/ranks/cl100k_base')).toBe(true);
    for (const late of ['/@modelcontextprotocol/sdk/', '/node_modules/zod/', '/@opentelemetry/exporter-trace-otlp-http/', '/@opentelemetry/sdk-trace-base/',
      '/@opentelemetry/semantic-conventions/', '/js-tiktoken/dist/index.cjs', '/js-tiktoken/dist/ranks/o200k_base', '/node_modules/undici/']) {
      expect([late, has(files, late)]).toEqual([late, false]);
    }
  });

  it('serves MCP on the first request to /mcp, loading the SDK then', async () => {
    const { server, loaded } = await start();
    const mcp = await connectMcp(server.url, { 'x-api-key': KEY });
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toContain('remember');
    await mcp.close();
    expect(await server.stop()).toBe(0);
    expect(has(loaded(), '/@modelcontextprotocol/sdk/')).toBe(true);
  });

  it('exports spans when tracing is on, continuing an incoming traceparent', async () => {
    const collector = await OtlpCollector.start();
    // OTEL_BSP_SCHEDULE_DELAY: the exporter's own variable, every 100 ms instead of every 5 s
    const { server, loaded } = await start({ STRATA__TELEMETRY__OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await fetch(`${server.url}/v1/users/traced-user/memories`, {
      headers: { 'x-api-key': KEY, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(200);
    const span = await waitFor('the request\'s server span', async () => collector.trace(traceId).find((s) => s.kind === KIND.SERVER));
    expect(span.parentSpanId).toBe('00f067aa0ba902b7');
    expect(span.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/users/:user_id/memories', 'http.response.status_code': 200 });
    expect(await server.stop()).toBe(0);
    await collector.close();
    expect(has(loaded(), '/@opentelemetry/exporter-trace-otlp-http/')).toBe(true);
  });
});
