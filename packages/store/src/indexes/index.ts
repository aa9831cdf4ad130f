export * from './tokenizer';
export * from './topk';
export * from './text-index';
