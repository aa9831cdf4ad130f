/**
 * Stand-ins for the remote embedding services the examples in examples/embeddings/ configure, each an
 * HTTP server on 127.0.0.1 speaking that service's real protocol on `POST /v1/embeddings` (requests,
 * replies and refusals shaped as the service sends them) and recording what it was sent:
 *
 * - `openai`: a Bearer key is required (401 otherwise), known models only (404 `model_not_found`),
 *   `dimensions` shortens text-embedding-3 vectors (re-normalized), more than the native size is 400.
 * - `ollama`: its OpenAI-compatible endpoint, no key, a model must be pulled (404 "try pulling it first").
 * - `tei` (text-embeddings-inference): one model, any `model` name accepted; more than 32 inputs in one
 *   request is refused with 413 (its default --max-client-batch-size), in its own error shape.
 *
 * Vectors are bags of hashed words (the same words, the same direction), so retrieval over them works.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ServiceKind = 'openai' | 'ollama' | 'tei';

export interface EmbeddingRequestSeen {
  authorization: string | undefined;
  body: { input: string | string[]; model?: string; dimensions?: number; [k: string]: unknown };
}

const MODELS: Record<ServiceKind, Record<string, number>> = {
  openai: { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072 },
  ollama: { 'nomic-embed-text': 768 },
  tei: { 'BAAI/bge-small-en-v1.5': 384 },
};
const TEI_MAX_BATCH = 32;

function bagOfWords(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? ['']) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619) >>> 0;
    v[h % dims] += 1;
  }
  v[0] += 0.01; // never all zeros
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function openAiError(res: ServerResponse, status: number, message: string, code: string | null, type = 'invalid_request_error'): void {
  send(res, status, { error: { message, type, param: null, code } });
}

export class FakeEmbeddingService {
  readonly requests: EmbeddingRequestSeen[] = [];
  private server: Server | null = null;
  url = '';

  constructor(readonly kind: ServiceKind, readonly apiKey: string | null = null) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(res, 404, { error: 'Not Found' });
      let body: EmbeddingRequestSeen['body'];
      try {
        body = JSON.parse(raw) as EmbeddingRequestSeen['body'];
      } catch {
        return this.kind === 'tei' ? send(res, 422, { message: 'Failed to deserialize the JSON body', code: 422, error_type: 'Validation' })
          : openAiError(res, 400, 'We could not parse the JSON body of your request.', null);
      }
      this.requests.push({ authorization: req.headers.authorization, body });
      this.answer(req, res, body);
    });
  }

  private answer(req: IncomingMessage, res: ServerResponse, body: EmbeddingRequestSeen['body']): void {
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (this.kind === 'openai') {
      if (!req.headers.authorization) return openAiError(res, 401, "You didn't provide an API key.", null);
      if (req.headers.authorization !== `Bearer ${this.apiKey}`) return openAiError(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
    }
    const model = body.model ?? '';
    const known = MODELS[this.kind];
    const servedModel = this.kind === 'tei' ? Object.keys(known)[0] : model;
    const native = known[servedModel];
    if (native === undefined) {
      return this.kind === 'ollama'
        ? openAiError(res, 404, `model "${model}" not found, try pulling it first`, null, 'api_error')
        : openAiError(res, 404, `The model \`${model}\` does not exist or you do not have access to it.`, 'model_not_found');
    }
    if (this.kind === 'tei' && inputs.length > TEI_MAX_BATCH) {
      return send(res, 413, { message: `batch size ${inputs.length} > maximum allowed batch size ${TEI_MAX_BATCH}`, code: 413, error_type: 'Validation' });
    }
    let dims = native;
    if (this.kind === 'openai' && body.dimensions !== undefined) {
      if (!Number.isInteger(body.dimensions) || body.dimensions < 1 || body.dimensions > native) {
        return openAiError(res, 400, `This model does not support specifying dimensions of ${body.dimensions}.`, null);
      }
      dims = body.dimensions;
    }
    const tokens = inputs.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
    send(res, 200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: bagOfWords(text, dims) })),
      model: servedModel,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }
}
