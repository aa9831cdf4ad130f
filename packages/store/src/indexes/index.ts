export * from './tokenizer';
export * from './topk';
export * from './text-index';
export * from './hnsw-builder';
export * from './vector-index';
export * from './sizes';
