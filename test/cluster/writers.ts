/** Closed-loop writers for fault tests: each writes numbered events to its own stream and records what was acknowledged. */
import { shardOf } from '../../packages/server/src/shards';
import { listEvents, newStream, type TestCluster, writeEvent } from '../helpers/cluster';
import type { Placed } from '../helpers/placement';

export interface Writer {
  user: string;
  stream: string;
  /** content → event id, for every acknowledged write */
  acked: Map<string, string>;
  /** writes that were never acknowledged (they may or may not be stored, but at most once) */
  unknown: string[];
}

/**
 * Starts one writer per entry of `via` (a node id each writes through, falling back to any live node
 * while that one is down). Returns the writers and a stop function that waits for them to finish.
 */
export function startWriters(cluster: TestCluster, via: number[], user = (i: number) => `writer-${i}`) {
  let running = true;
  const writers: Writer[] = via.map((_, i) => ({ user: user(i), stream: newStream(), acked: new Map(), unknown: [] }));
  const loops = writers.map(async (w, i) => {
    for (let n = 0; running && n < 100_000; n++) {
      const content = `${w.user} #${n}`;
      let attempt = 0;
      const url = () => {
        const own = cluster.node(via[i]);
        const live = cluster.live();
        return own.proc && attempt++ % 3 !== 2 ? own.url : live[attempt % live.length].url;
      };
      const id = await writeEvent(url, w.user, w.stream, content, 20_000);
      if (id) w.acked.set(content, id);
      else w.unknown.push(content);
    }
  });
  return {
    writers,
    // waits for every loop, then reports the first that failed (all settled first: the others must not
    // write on while the caller stops its cluster)
    stop: async () => {
      running = false;
      const settled = await Promise.allSettled(loops);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/** Every acknowledged event is on the node exactly once, under its acknowledged id; nothing appears twice. */
export async function checkExactlyOnce(url: string, writers: Writer[], query = ''): Promise<string[]> {
  const problems: string[] = [];
  for (const w of writers) {
    const events = await listEvents(url, w.user, w.stream, query);
    const seen = new Map<string, number>();
    for (const e of events) seen.set(e.content, (seen.get(e.content) ?? 0) + 1);
    for (const [content, n] of seen) if (n > 1) problems.push(`${url}: '${content}' stored ${n} times`);
    const ids = new Map(events.map((e) => [e.content, e.event_id]));
    for (const [content, id] of w.acked) {
      if (!ids.has(content)) problems.push(`${url}: acknowledged '${content}' missing`);
      else if (ids.get(content) !== id) problems.push(`${url}: '${content}' has id ${ids.get(content)}, acknowledged as ${id}`);
    }
  }
  return problems;
}

/**
 * Every acknowledged write read back exactly once: through a node picked at random (routed as a client's
 * read is), and linearizably on every live node. The problems found, none when all is well.
 */
export async function readBackExactlyOnce(cluster: TestCluster, writers: Writer[]): Promise<string[]> {
  const problems: string[] = [];
  for (const w of writers) {
    const live = cluster.live();
    problems.push(...await checkExactlyOnce(live[Math.floor(Math.random() * live.length)].url, [w]));
    for (const n of live) problems.push(...await checkExactlyOnce(n.url, [w], '&consistency=linearizable'));
  }
  return problems;
}

/**
 * Every writer's acknowledged events are on every voter of its group, exactly once: read on each voter
 * from its own replica, after a ReadIndex (a follower may not have applied the last writes yet; a
 * linearizable read waits until it has everything committed before the read).
 */
export async function checkReplicas(cluster: TestCluster, writers: Writer[], groups: Placed[], shards: number): Promise<string[]> {
  const problems: string[] = [];
  for (const w of writers) {
    const g = shardOf(w.user, shards);
    const voters = g === 0 ? cluster.live().map((n) => n.id) : groups.find((p) => p.group_id === g)!.voters;
    for (const v of voters) problems.push(...(await checkExactlyOnce(cluster.node(v).url, [w], '&consistency=linearizable')));
  }
  return problems;
}

/**
 * A fault test's teardown: its writers first (not left writing to stopped nodes), then its cluster, even
 * when a writer failed (the nodes would run on into the next test file). A failed writer's error is
 * printed with the nodes' error lines (a 500's cause, by its request id) and rethrown.
 */
export async function stopWritersAndCluster(writing: { stop(): Promise<void> } | undefined, cluster: TestCluster | undefined): Promise<void> {
  try {
    await writing?.stop();
  } catch (err) {
    console.error(`a writer failed: ${String(err)}\nthe nodes' errors:\n${cluster?.errorLog() ?? ''}`);
    throw err;
  } finally {
    await cluster?.stop();
  }
}
