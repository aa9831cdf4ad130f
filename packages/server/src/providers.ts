/**
 * The node's providers from configuration: the embedder (`[embedding]`) and the LLM (`[llm]`). Built
 * once at start; a provider that cannot be built stops the start with a message that says what to do
 * (e.g. the local word vectors were never prepared).
 */
import { createEmbedder, OpenAiLlm, type Embedder, type EmbeddingConfig, type Llm } from '@strata/memory';
import { ConfigError, type Config } from './config';

export interface Providers {
  embedder: Embedder;
  /** null with `llm.provider = "none"`: the offline algorithms decide */
  llm: Llm | null;
  close(): Promise<void>;
}

function required<T>(value: T | null, key: string, provider: string): T {
  if (value === null || value === undefined || value === '') {
    throw new ConfigError(`Invalid configuration: '${key}' is required when the provider is "${provider}"`);
  }
  return value;
}

/** The `[embedding]` section as the embedding factory takes it. */
export function embeddingConfig(config: Config): EmbeddingConfig {
  const e = config.embedding;
  switch (e.provider) {
    case 'local':
      return { provider: 'local' };
    case 'hashing':
      return { provider: 'hashing', dimensions: e.dimensions ?? undefined };
    case 'openai':
      return {
        provider: 'openai', base_url: required(e.base_url, 'embedding.base_url', 'openai'), api_key: e.api_key ?? undefined,
        model: required(e.model, 'embedding.model', 'openai'), dimensions: required(e.dimensions, 'embedding.dimensions', 'openai'),
        send_dimensions: e.send_dimensions, batch_size: e.batch_size, timeout_ms: e.timeout_ms,
      };
  }
}

export async function createProviders(config: Config): Promise<Providers> {
  const embedder = await createEmbedder(embeddingConfig(config));
  let llm: OpenAiLlm | null = null;
  if (config.llm.provider === 'openai') {
    llm = new OpenAiLlm({
      baseUrl: required(config.llm.base_url, 'llm.base_url', 'openai'), model: required(config.llm.model, 'llm.model', 'openai'),
      apiKey: config.llm.api_key,
    });
  }
  return {
    embedder,
    llm,
    close: async () => {
      const closable = embedder as Embedder & { close?: () => Promise<void> };
      if (typeof closable.close === 'function') await closable.close();
      if (llm) await llm.close();
    },
  };
}
