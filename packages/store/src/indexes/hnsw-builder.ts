/**
 * Building an HNSW graph costs ~0.1-0.2 ms per vector (100 dimensions, M=16, efConstruction=100), so a
 * rebuild of 100,000 vectors would block the event loop for ~15 s. Builders do it elsewhere:
 *
 * - `WorkerHnswBuilder` (default): a worker thread builds the graph from a transferred Float32Array and
 *   writes it to a temporary file (hnswlib-node serializes to files only); the caller's thread loads it
 *   with the asynchronous `readIndex`, which runs on libuv's pool, not the event loop.
 * - `InlineHnswBuilder`: builds on the calling thread in chunks, yielding to the event loop between
 *   chunks (each chunk ≈ a few ms). For environments without worker threads; slower overall.
 *
 * Either way the result is an `HierarchicalNSW` whose ef has NOT been set: the caller sets it after
 * every load (hnswlib resets ef to 10 when reading an index).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { HierarchicalNSW } from 'hnswlib-node';

export interface HnswParams {
  dimensions: number;
  /** graph degree (default 16) */
  m: number;
  efConstruction: number;
  seed: number;
  /** maxElements of the new index (≥ the number of vectors) */
  capacity: number;
}

export interface HnswBuildInput extends HnswParams {
  labels: Int32Array;
  /** labels.length × dimensions, row i is the vector of labels[i] (already normalized) */
  vectors: Float32Array;
}

export interface HnswBuilder {
  build(input: HnswBuildInput): Promise<HierarchicalNSW>;
}

/** An empty index with the given parameters. */
export function createHnsw(p: HnswParams): HierarchicalNSW {
  const index = new HierarchicalNSW('ip', p.dimensions);
  index.initIndex({ maxElements: Math.max(1, p.capacity), m: p.m, efConstruction: p.efConstruction, randomSeed: p.seed });
  return index;
}

/** Row `i` of a flat matrix as the plain array hnswlib-node requires. */
export function rowArray(vectors: Float32Array, dims: number, i: number): number[] {
  return Array.from(vectors.subarray(i * dims, (i + 1) * dims));
}

export class InlineHnswBuilder implements HnswBuilder {
  /** @param chunk vectors added between two yields to the event loop */
  constructor(private readonly chunk = 20) {}

  async build(input: HnswBuildInput): Promise<HierarchicalNSW> {
    const index = createHnsw(input);
    for (let i = 0; i < input.labels.length; i++) {
      index.addPoint(rowArray(input.vectors, input.dimensions, i), input.labels[i]);
      if ((i + 1) % this.chunk === 0) await new Promise((r) => setImmediate(r));
    }
    return index;
  }
}

/** Code of the worker: plain CommonJS (workers do not go through the TypeScript loader). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { HierarchicalNSW } = require(workerData.hnswlibPath);
const { dimensions, m, efConstruction, seed, capacity, labels, vectors, file } = workerData;
const index = new HierarchicalNSW('ip', dimensions);
index.initIndex({ maxElements: Math.max(1, capacity), m, efConstruction, randomSeed: seed });
for (let i = 0; i < labels.length; i++) {
  index.addPoint(Array.from(vectors.subarray(i * dimensions, (i + 1) * dimensions)), labels[i]);
}
index.writeIndexSync(file);
parentPort.postMessage('done');
`;

export class WorkerHnswBuilder implements HnswBuilder {
  /** Builds run one at a time: on a small machine two concurrent builds only slow each other down. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly dir = tmpdir()) {}

  build(input: HnswBuildInput): Promise<HierarchicalNSW> {
    const run = this.queue.then(() => this.buildNow(input));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async buildNow(input: HnswBuildInput): Promise<HierarchicalNSW> {
    const file = join(this.dir, `strata-hnsw-${process.pid}-${randomBytes(8).toString('hex')}.bin`);
    try {
      await new Promise<void>((resolve, reject) => {
        const worker = new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: {
            hnswlibPath: require.resolve('hnswlib-node'),
            dimensions: input.dimensions,
            m: input.m,
            efConstruction: input.efConstruction,
            seed: input.seed,
            capacity: input.capacity,
            labels: input.labels,
            vectors: input.vectors,
            file,
          },
          transferList: [input.labels.buffer as ArrayBuffer, input.vectors.buffer as ArrayBuffer],
        });
        let done = false;
        worker.once('message', () => {
          done = true;
          resolve();
        });
        worker.once('error', reject);
        worker.once('exit', (code) => {
          if (!done) reject(new Error(`HNSW build worker exited with code ${code}`));
        });
      });
      const index = new HierarchicalNSW('ip', input.dimensions);
      await index.readIndex(file);
      return index;
    } finally {
      await fs.rm(file, { force: true });
    }
  }
}
