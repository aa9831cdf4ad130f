/**
 * One entry point from configuration to an Embedder. The keys mirror the `[embedding]` section of the
 * configuration file (snake_case), so the server can pass that section through as it is.
 */
import type { Embedder } from '../providers/types';
import { EmbeddingError } from './errors';
import { HashingEmbedder } from './hashing-embedder';
import { OpenAiEmbedder } from './openai-embedder';
import { SifEmbedder } from './sif-embedder';
import { UseLiteEmbedder } from './use-embedder';

export type EmbeddingConfig =
  | {
      /** SIF word vectors prepared at install (the default): offline, 100 dimensions. */
      provider: 'local';
      /** Directory of vectors.bin / vocab.txt (default: node_modules/.cache/strata-embeddings). */
      dir?: string;
      sif_a?: number;
      remove_common_component?: boolean;
      oov_fallback?: boolean;
    }
  | {
      provider: 'openai';
      base_url: string;
      api_key?: string;
      model: string;
      dimensions: number;
      send_dimensions?: boolean;
      batch_size?: number;
      timeout_ms?: number;
      max_retries?: number;
    }
  | { provider: 'hashing'; dimensions?: number }
  /** Universal Sentence Encoder lite: optional, needs the @energetic-ai packages (see use-embedder.ts). */
  | { provider: 'use-lite'; batch_size?: number };

export async function createEmbedder(config: EmbeddingConfig): Promise<Embedder> {
  switch (config.provider) {
    case 'local':
      // read off the main thread, taking the read a node's entry began early (embedding/prefetch.ts)
      return SifEmbedder.loadAsync({ dir: config.dir, a: config.sif_a, removeCommonComponent: config.remove_common_component, oovFallback: config.oov_fallback });
    case 'openai':
      return new OpenAiEmbedder({
        baseUrl: config.base_url,
        apiKey: config.api_key,
        model: config.model,
        dimensions: config.dimensions,
        sendDimensions: config.send_dimensions,
        batchSize: config.batch_size,
        timeoutMs: config.timeout_ms,
        maxRetries: config.max_retries,
      });
    case 'hashing':
      return new HashingEmbedder({ dimensions: config.dimensions });
    case 'use-lite':
      return UseLiteEmbedder.load({ batchSize: config.batch_size });
    default:
      throw new EmbeddingError(`unknown embedding provider "${(config as { provider: unknown }).provider}" (expected local, openai, hashing or use-lite)`, 'embedding_config');
  }
}
