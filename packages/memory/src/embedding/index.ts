/** Embedding providers behind the `Embedder` interface (providers/types.ts). */
export { createEmbedder, type EmbeddingConfig } from './factory';
export { SifEmbedder, loadWordVectorTable, DEFAULT_SIF_A, type SifEmbedderOptions, type LoadSifOptions } from './sif-embedder';
export { HashingEmbedder, type HashingEmbedderOptions } from './hashing-embedder';
export { OpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder';
export { UseLiteEmbedder, type UseEmbedderOptions } from './use-embedder';
export { EmbeddingError, EmbeddingSetupError, EmbeddingHttpError, EmbeddingResponseError, EmbeddingTransportError } from './errors';
export { defaultEmbeddingsDir, PREPARE_COMMAND } from './paths';
export { cosine, dot, l2norm, normalizeInPlace, emptyTextVector } from './vector-math';
export { avalanche, mulberry32 } from './hash';
