import { loadConfig } from '../src/config';
import { createProviders, embeddingConfig } from '../src/providers';

const config = (env: Record<string, string>) => loadConfig({ env, file: null });

describe('providers from configuration', () => {
  it('builds the hashing embedder and no LLM', async () => {
    const providers = await createProviders(config({ STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__EMBEDDING__DIMENSIONS: '64' }));
    expect(providers.embedder.dimensions).toBe(64);
    const [v] = await providers.embedder.embed(['I live in Lisbon']);
    expect(v).toHaveLength(64);
    expect(providers.llm).toBeNull();
    await providers.close();
  });

  it('defaults to the local embedder', () => {
    expect(embeddingConfig(config({}))).toEqual({ provider: 'local' });
  });

  it('passes the OpenAI embedder settings through and requires model, base_url and dimensions', () => {
    expect(embeddingConfig(config({
      STRATA__EMBEDDING__PROVIDER: 'openai', STRATA__EMBEDDING__BASE_URL: 'http://127.0.0.1:8080/v1', STRATA__EMBEDDING__MODEL: 'm',
      STRATA__EMBEDDING__DIMENSIONS: '8', STRATA__EMBEDDING__API_KEY: 'sk-test',
    }))).toEqual({ provider: 'openai', base_url: 'http://127.0.0.1:8080/v1', model: 'm', dimensions: 8, api_key: 'sk-test', send_dimensions: false, batch_size: 64, timeout_ms: 30000 });
    expect(() => embeddingConfig(config({ STRATA__EMBEDDING__PROVIDER: 'openai', STRATA__EMBEDDING__MODEL: 'm', STRATA__EMBEDDING__DIMENSIONS: '8' })))
      .toThrow("'embedding.base_url' is required");
    expect(() => embeddingConfig(config({ STRATA__EMBEDDING__PROVIDER: 'openai', STRATA__EMBEDDING__BASE_URL: 'http://x/v1', STRATA__EMBEDDING__MODEL: 'm' })))
      .toThrow("'embedding.dimensions' is required");
  });

  it('builds the OpenAI-compatible LLM, and refuses it without a model', async () => {
    const providers = await createProviders(config({
      STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__LLM__PROVIDER: 'openai', STRATA__LLM__BASE_URL: 'http://127.0.0.1:9/v1', STRATA__LLM__MODEL: 'small-model',
    }));
    expect(providers.llm?.id).toBe('openai-compatible:small-model');
    await providers.close();
    await expect(createProviders(config({ STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__LLM__PROVIDER: 'openai', STRATA__LLM__BASE_URL: 'http://127.0.0.1:9/v1' })))
      .rejects.toThrow("'llm.model' is required");
  });
});
