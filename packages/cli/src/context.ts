/**
 * The connection every command but `serve` uses: `--url`/`--api-key` or STRATA_URL/STRATA_API_KEY, a
 * client for it (closed when the command ends) and the output mode.
 */
import type { Command } from 'commander';
import type { StrataClient } from '@strata/client';
import { UsageError } from './errors';
import { Output } from './output';

/** The server's default address (packages/server/src/config.ts: server.port 3000). */
export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface GlobalOptions {
  url: string;
  apiKey?: string;
  json?: boolean;
}

export interface CommandContext {
  client: StrataClient;
  out: Output;
  url: string;
  json: boolean;
}

export function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

export function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(url)} is not a URL (e.g. ${DEFAULT_URL}).`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http:// or https:// URL, not ${JSON.stringify(url)}.`);
  return url.replace(/\/+$/, '');
}

/**
 * A commander action running `run` with a connected client. The client pools connections (the CLI
 * runs on Node only) and is closed afterwards, so no socket keeps the process alive.
 */
export function connected(run: (ctx: CommandContext, command: Command) => Promise<void>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const g = globalsOf(command);
    const url = checkUrl(g.url);
    // undici is loaded by the commands that talk to a node, not by `--help`, `--version` or `serve`.
    const { NodeStrataClient } = await import('@strata/client/node');
    const client = new NodeStrataClient({ baseUrl: url, apiKey: g.apiKey, connections: 4 });
    try {
      await run({ client, out: new Output(g.json === true), url, json: g.json === true }, command);
    } finally {
      await client.close();
    }
  };
}
