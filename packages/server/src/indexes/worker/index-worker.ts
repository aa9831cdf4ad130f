/**
 * The main thread's side of the index worker (thread.ts): starts the thread on first use, sends it the
 * indexes' changes and queries, and routes its answers and size reports back. One worker per node: on
 * a small machine one more thread beside the event loop is what pays (the event loop keeps HTTP, JSON,
 * LevelDB reads and apply); every shard's large users share it.
 *
 * If the thread dies, every index it held is lost (RemoteUserIndex.lost: its user is built again, in a
 * new worker, on next use) and the requests waiting for it fail.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { FromWorker, IndexStats, ToWorker, WorkerQuery, WorkerSetOptions } from './protocol';

/** A request the worker answered that its index is no longer held (dropped meanwhile): ask again after a rebuild. */
export class IndexGoneError extends Error {}

export interface WorkerClient {
  stats(stats: IndexStats): void;
  failed(error: string): void;
  lost(): void;
}

/**
 * The worker's entry: the compiled file next to this one, or, when the node runs its TypeScript sources
 * (tsx, jest), the source through tsx's require hook (a worker does not inherit the parent's loader).
 */
function workerEntry(): { source: string; eval: boolean; execArgv?: string[] } {
  const file = __filename.replace(/index-worker\.(ts|js)$/, (_m, ext: string) => `thread.${ext}`);
  if (file.endsWith('.js')) return { source: file, eval: false };
  const bootstrap = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(file)});`;
  return { source: bootstrap, eval: true, execArgv: [...profilingArgs(process.execArgv), '--conditions=strata-source'] };
}

/** The node's --cpu-prof flags, which the worker keeps (a worker's own execArgv replaces the parent's). */
export function profilingArgs(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i];
    if (!a.startsWith('--cpu-prof')) continue;
    out.push(a);
    const takesValue = a === '--cpu-prof-dir' || a === '--cpu-prof-name' || a === '--cpu-prof-interval';
    if (takesValue && i + 1 < execArgv.length) out.push(execArgv[++i]);
  }
  return out;
}

export class IndexWorker {
  private worker: Worker | null = null;
  private nextHandle = 1;
  private nextRequest = 1;
  private readonly clients = new Map<number, WorkerClient>();
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  constructor(private readonly options: WorkerSetOptions, private readonly logger: Logger) {}

  /** A handle for a new index, its reports going to `client`. */
  register(client: WorkerClient): number {
    this.ensure();
    const handle = this.nextHandle++;
    this.clients.set(handle, client);
    return handle;
  }

  /** Forgets an index (its memory in the worker is freed once the messages before this are applied). */
  unregister(handle: number): void {
    if (!this.clients.delete(handle)) return;
    this.worker?.postMessage({ type: 'drop', handle } satisfies ToWorker);
  }

  /** Users' indexes held by the worker (a gauge). */
  get held(): number {
    return this.clients.size;
  }

  /** Sends an index's changes (none for a handle lost with a dead worker: a new worker never held it). */
  post(message: Extract<ToWorker, { type: 'ops' }>, transfer: ArrayBuffer[] = []): void {
    if (this.clients.has(message.handle)) this.ensure().postMessage(message, transfer);
  }

  /** Sends a query or an idle wait and resolves with the worker's reply. */
  request<T>(message: { type: 'query'; handle: number; query: WorkerQuery } | { type: 'idle'; handle: number }): Promise<T> {
    const worker = this.ensure();
    const id = this.nextRequest++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...message, id } as ToWorker);
    });
  }

  /** Stops the thread (node stop). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.clients.clear(); // stopping: nothing to build again
    if (w) await w.terminate();
    this.lose(new Error('index worker stopped'));
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const entry = workerEntry();
    const worker = new Worker(entry.source, { eval: entry.eval, execArgv: entry.execArgv, workerData: this.options });
    // the node's stop ends it; it must not keep a process alive by itself
    worker.unref();
    worker.on('message', (m: FromWorker) => this.receive(m));
    worker.on('error', (err) => this.logger.error({ err }, 'index worker failed; its users are built again on next use'));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.lose(new Error(`index worker exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  private receive(m: FromWorker): void {
    if (m.type === 'reply') {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.value);
      else w.reject(m.gone ? new IndexGoneError(m.error) : new Error(m.error));
    } else if (m.type === 'stats') this.clients.get(m.handle)?.stats(m.stats);
    else this.clients.get(m.handle)?.failed(m.error);
  }

  private lose(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    for (const client of this.clients.values()) client.lost();
    this.clients.clear();
  }
}
