// Providers and ingest preparation are used everywhere, so they are exported flat; each domain module
// is a namespace (its helpers, e.g. tokenizers and similarity functions, stay apart).
export * from './providers/types';
export * from './ingest/prepare-event';
export * from './ingest/chat-export';
export * from './embedding';
export { OpenAiLlm } from './providers/openai-llm';
export * as consolidation from './consolidation';
export * as insights from './insights';
export * as planning from './planning';
export * as semantic from './semantic';
export * as text from './text';
export * as org from './org';
export * as retrieval from './retrieval';
export * as context from './context';
