/**
 * Provider interfaces. Everything non-deterministic (embeddings, LLM output) is computed by the node that
 * proposes a command, before proposing, and travels inside the command (ARCHITECTURE.md, the one rule).
 */

/** Turns texts into unit-length vectors of a fixed dimension. */
export interface Embedder {
  /** Stable name of the model, stored beside vectors so an index built with another model is rebuilt. */
  readonly id: string;
  readonly dimensions: number;
  /** One vector per text, in order; each L2-normalized (cosine = dot product). */
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A chat-completion model (any OpenAI-compatible `/chat/completions`). */
export interface Llm {
  readonly id: string;
  /** The assistant's reply text. Rejects on transport errors after retries; callers fall back to offline logic. */
  complete(messages: ChatMessage[], options?: { json?: boolean; maxTokens?: number; temperature?: number }): Promise<string>;
}
