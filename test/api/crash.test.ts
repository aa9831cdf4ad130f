import { StrataClient } from '@strata/client';
import { removeDir, startServer, tempDir } from '../helpers/server-process';

const KEY = 'crash-test-admin-key';
const STREAMS = ['a1b2c3d4-0000-4000-8000-000000000001', 'a1b2c3d4-0000-4000-8000-000000000002'];

describe('crash safety', () => {
  it('keeps every acknowledged event, exactly once, across a SIGKILL under load', async () => {
    const dataDir = tempDir();
    const env = { STRATA_API_KEY: KEY };
    const server = await startServer({ dataDir, env });
    const client = new StrataClient({ baseUrl: server.url, apiKey: KEY, timeoutMs: 5000 });
    const acknowledged: string[] = [];
    let stop = false;

    // Writers: single events and batches, on two streams, until the server dies (bounded by count too).
    const writer = async (w: number) => {
      for (let n = 0; n < 5000 && !stop; n++) {
        const stream = STREAMS[n % 2];
        try {
          if (n % 5 === 0) {
            const contents = [0, 1, 2].map((k) => `w${w}-n${n}-b${k}`);
            await client.ingestBatch('crash-user', stream, contents.map((content) => ({ content })));
            acknowledged.push(...contents);
          } else {
            const content = `w${w}-n${n}`;
            await client.ingest('crash-user', stream, { content }, { idempotencyKey: n % 7 === 0 ? `k-${w}-${n}` : undefined });
            acknowledged.push(content);
          }
        } catch {
          return; // the server is gone: what was not acknowledged may or may not be stored
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    // Let the writers get going, then kill the server without warning.
    while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 20));
    await server.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await client.close();
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);

    const restarted = await startServer({ dataDir, env });
    const reader = new StrataClient({ baseUrl: restarted.url, apiKey: KEY });
    const stored: string[] = [];
    for (const stream of STREAMS) stored.push(...(await reader.allEvents('crash-user', stream)).map((e) => e.content));
    const counts = new Map<string, number>();
    for (const c of stored) counts.set(c, (counts.get(c) ?? 0) + 1);
    const missing = acknowledged.filter((c) => !counts.has(c));
    const duplicated = [...counts].filter(([, n]) => n > 1).map(([c]) => c);
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
    // Nothing invented: every stored event was sent by a writer.
    expect(stored.every((c) => /^w\d+-n\d+(-b\d)?$/.test(c))).toBe(true);
    // The restarted node takes new writes after the replayed ones.
    await reader.ingest('crash-user', STREAMS[0], { content: 'after restart' });
    const last = (await reader.allEvents('crash-user', STREAMS[0])).at(-1);
    expect(last?.content).toBe('after restart');
    await reader.close();
    await restarted.stop();
    removeDir(dataDir);
  }, 60_000);
});
