/** Errors of the embedding providers. `code` is stable for callers and logs; the message says what to do. */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}

/** The local model's files are missing or unusable (install-time preparation did not run or failed). */
export class EmbeddingSetupError extends EmbeddingError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'embedding_setup', options);
    this.name = 'EmbeddingSetupError';
  }
}

/** A remote endpoint answered with an HTTP error (after retries, when retryable). */
export class EmbeddingHttpError extends EmbeddingError {
  constructor(
    message: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(message, 'embedding_http');
    this.name = 'EmbeddingHttpError';
  }
}

/** A remote endpoint answered 200 with a body that is not a valid embeddings reply. */
export class EmbeddingResponseError extends EmbeddingError {
  constructor(message: string) {
    super(message, 'embedding_bad_response');
    this.name = 'EmbeddingResponseError';
  }
}

/** No answer in time, or the connection failed, on every attempt. */
export class EmbeddingTransportError extends EmbeddingError {
  constructor(message: string, code: 'embedding_timeout' | 'embedding_network', options?: { cause?: unknown }) {
    super(message, code, options);
    this.name = 'EmbeddingTransportError';
  }
}
