/**
 * The index worker: a thread that holds the indexes of the users the main thread gives it (the large
 * ones, DerivedIndexes `workerMinUnits`) and answers their retrievals, so a query's searches and fusion
 * run beside the event loop that serves HTTP, ingest, /livez and Raft heartbeats instead of on it.
 *
 * It reads nothing itself: the main thread reads LevelDB (as it does for its own indexes) and sends the
 * changes in apply order; each index applies its messages one after the other (a load is asynchronous,
 * so what follows waits for it). The ranking is the main thread's code over the same records, vectors
 * and contexts (sources.ts, memory's retrieveAsync), so the answer is the same wherever the index is.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { retrieval } from '@strata/memory';
import { collapseBySource, pendingSetOf, retrievalSources } from '../sources';
import type { FromWorker, IndexOp, ToWorker, WorkerAnswer, WorkerQuery, WorkerSetOptions } from './protocol';
import { unpackEntries } from './entry-chunks';

const { isSlimRecord, retrieveAsync, UnitSet, UserIndex } = retrieval;

interface Held {
  index: retrieval.UserIndex;
  /** every message for this index, in order */
  chain: Promise<void>;
  /** entries of a load being received */
  loading: retrieval.IndexEntry[] | null;
}

const options = workerData as WorkerSetOptions;
const port = parentPort!;
const held = new Map<number, Held>();
const unreported = new Set<number>();
let reportScheduled = false;

const send = (message: FromWorker) => port.postMessage(message);
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'ops': {
      let h = held.get(message.handle);
      if (!h) held.set(message.handle, (h = { index: new UserIndex(options), chain: Promise.resolve(), loading: null }));
      const target = h;
      target.chain = target.chain
        .then(() => applyAll(target, message.ops))
        .then(() => reportSoon(message.handle))
        // the main thread rebuilds the user (its index is marked stale there)
        .catch((err) => send({ type: 'failed', handle: message.handle, error: messageOf(err) }));
      return;
    }
    case 'drop':
      held.delete(message.handle);
      return;
    case 'query':
    case 'idle': {
      const h = held.get(message.handle);
      if (!h) {
        send({ type: 'reply', id: message.id, ok: false, error: 'index not held by the worker', gone: true });
        return;
      }
      const run: () => Promise<unknown> = message.type === 'query' ? () => answer(h, message.query) : () => h.index.vector.whenIdle();
      h.chain = h.chain.then(run).then(
        (value) => send({ type: 'reply', id: message.id, ok: true, value }),
        (err) => send({ type: 'reply', id: message.id, ok: false, error: messageOf(err), gone: false }),
      );
      return;
    }
  }
});

async function applyAll(h: Held, ops: IndexOp[]): Promise<void> {
  for (const o of ops) {
    switch (o.op) {
      case 'begin':
        h.loading = [];
        break;
      case 'entries':
        for (const e of unpackEntries(o.chunk, options.embedder.dimensions)) h.loading!.push(e);
        break;
      case 'load': {
        const entries = h.loading!;
        h.loading = null;
        await h.index.load(entries);
        break;
      }
      case 'edges':
        h.index.loadEdges(o.edges);
        break;
      case 'put':
        h.index.put(o.unit, o.vector, o.context);
        break;
      case 'replace':
        h.index.replaceRecord(o.unit);
        break;
      case 'delete':
        h.index.delete(o.id);
        break;
      case 'putEdge':
        h.index.putEdge(o.edge);
        break;
      case 'removeEdge':
        h.index.removeEdge(o.id);
        break;
    }
  }
}

/** One retrieval over a held index (the main thread's RetrievalService.run does the same over its own). */
async function answer(h: Held, q: WorkerQuery): Promise<WorkerAnswer> {
  const pending = q.pending ? pendingSetOf(options.embedder.dimensions, q.pending.hits, q.pending.vectors) : null;
  const orgs: retrieval.UnitSet[] = [];
  for (const entries of q.orgs) {
    const set = new UnitSet({ ...options, wholeRecords: true });
    await set.load(entries);
    if (set.size > 0) orgs.push(set);
  }
  const sources = retrievalSources({ user: h.index, orgs, pending, scope: q.scope, streamId: q.streamId, queryHash: q.queryHash });
  const stages: WorkerAnswer['stages'] = {};
  let last = performance.now();
  const clock: retrieval.StageClock = {
    end(stage) {
      const now = performance.now();
      stages[stage] = now - last;
      last = now;
    },
  };
  const config = { ...q.config, fusion: { ...q.config.fusion, collapseKey: collapseBySource } };
  const outcome = await retrieveAsync(sources, q.request, config, q.now, clock);
  return { results: outcome.results.map((r) => ({ ...r, slim: isSlimRecord(r.unit) })), stages };
}

/** Tells the main thread the size of the indexes changed since the last report (once per turn of the loop). */
function reportSoon(handle: number): void {
  unreported.add(handle);
  if (reportScheduled) return;
  reportScheduled = true;
  setImmediate(() => {
    reportScheduled = false;
    for (const id of unreported) {
      const h = held.get(id);
      if (!h) continue;
      const { index } = h;
      const building = index.vector.mode === 'building';
      send({ type: 'stats', handle: id, stats: { size: index.size, edgeCount: index.edgeCount, bytes: index.estimatedBytes(), building } });
      // the graph's end changes what search does and what it holds: reported again then
      if (building) void index.vector.whenIdle().then(() => reportSoon(id));
    }
    unreported.clear();
  });
}
