export * from './tokenizer';
export * from './render';
