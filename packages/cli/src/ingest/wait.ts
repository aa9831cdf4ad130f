/**
 * `strata ingest --wait`: after the events are accepted, follow the backlog (`GET /v1/status/pending`,
 * over what the key may see) until nothing waits for consolidation, i.e. the events are memory and
 * retrieval finds them as such. Progress on stderr like the ingest's own: a bar on a terminal, a
 * plain line at most once a second otherwise.
 */
import type { PendingStatus, StrataClient } from '@strata/client';
import { Failed } from '../errors';

export interface WaitOptions {
  timeoutMs: number;
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  pollMs?: number;
  now?: () => number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitForMemory(client: StrataClient, { timeoutMs, stream, pollMs = 500, now = Date.now }: WaitOptions): Promise<PendingStatus> {
  const start = now();
  let most = 0; // the largest backlog seen: the bar's 100 %
  let lastLine = -Infinity;
  for (;;) {
    const status = await client.pending();
    most = Math.max(most, status.pending);
    const done = most - status.pending;
    const t = now();
    const seconds = ((t - start) / 1000).toFixed(1);
    const line = `memory: ${done}/${most} events consolidated, ${status.pending} waiting${status.failed ? `, ${status.failed} failed` : ''} (${seconds} s)`;
    if (stream.isTTY) stream.write(`\r${bar(done, most)} ${line}\u001b[K`);
    else if (status.ready || t - lastLine >= 1000) {
      stream.write(`${line}\n`);
      lastLine = t;
    }
    if (status.ready) {
      if (stream.isTTY) stream.write('\n');
      return status;
    }
    if (t - start > timeoutMs) {
      if (stream.isTTY) stream.write('\n');
      throw new Failed('timeout', `${status.pending} event(s) still wait for consolidation after ${Math.round(timeoutMs / 1000)} s; they stay accepted and become memory later (strata status shows the backlog).`);
    }
    await sleep(pollMs);
  }
}

function bar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
