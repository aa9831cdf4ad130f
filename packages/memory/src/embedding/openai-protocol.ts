/**
 * The pure half of the OpenAI-compatible `/embeddings` client: request bodies, reply validation, and the
 * retry policy (which statuses to retry, how long to wait). No I/O here, so all of it is tested directly.
 */
import { EmbeddingResponseError } from './errors';
import { normalizeInPlace } from './vector-math';

export function buildRequestBody(input: readonly string[], model: string, dimensions?: number): string {
  return JSON.stringify(dimensions === undefined ? { input, model } : { input, model, dimensions });
}

/** Decodes OpenAI's `encoding_format: "base64"` form (little-endian float32), which some servers default to. */
function decodeBase64Floats(s: string): number[] {
  const buf = Buffer.from(s, 'base64');
  if (buf.length % 4 !== 0) throw new EmbeddingResponseError('embedding is base64 but not a whole number of float32 values');
  const out: number[] = new Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/**
 * Checks a parsed reply against the request: one item per input, every index once, every vector of the
 * configured dimension and finite, not all zeros. Returns unit vectors in input order.
 */
export function parseEmbeddingsReply(body: unknown, expected: number, dimensions: number): Float32Array[] {
  const bad = (why: string): never => {
    throw new EmbeddingResponseError(`embeddings endpoint sent a malformed reply: ${why}`);
  };
  if (typeof body !== 'object' || body === null) return bad('not a JSON object');
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data)) return bad('no "data" array');
  if (data.length !== expected) return bad(`${data.length} embeddings for ${expected} inputs`);
  const out: (Float32Array | undefined)[] = new Array(expected);
  data.forEach((item: unknown, pos) => {
    if (typeof item !== 'object' || item === null) return bad(`data[${pos}] is not an object`);
    const { index, embedding } = item as { index?: unknown; embedding?: unknown };
    const i = index === undefined ? pos : index; // a few servers omit index; then order is the order
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= expected) return bad(`data[${pos}].index ${String(index)} is out of range`);
    if (out[i]) return bad(`index ${i} appears twice`);
    const values = typeof embedding === 'string' ? decodeBase64Floats(embedding) : embedding;
    if (!Array.isArray(values)) return bad(`data[${pos}].embedding is not an array`);
    if (values.length !== dimensions) return bad(`data[${pos}].embedding has ${values.length} dimensions, configured ${dimensions}`);
    const v = new Float32Array(dimensions);
    for (let d = 0; d < dimensions; d++) {
      const x = values[d] as unknown;
      if (typeof x !== 'number' || !Number.isFinite(x)) return bad(`data[${pos}].embedding[${d}] is not a finite number`);
      v[d] = x;
    }
    if (!normalizeInPlace(v)) return bad(`data[${pos}].embedding is all zeros`);
    out[i] = v;
  });
  return out as Float32Array[];
}

/** 408 (timeout), 429 (rate limit) and every 5xx are worth another try; other 4xx are the caller's fault. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Exponential backoff with full jitter (AWS's recipe): uniform in [0, min(max, base * 2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(ceiling * random());
}

/** The server's own explanation from an error body (`{"error": {"message": ...}}` or `{"error": "..."}`). */
export function errorMessageOf(bodyText: string): string {
  try {
    const j = JSON.parse(bodyText) as { error?: unknown; message?: unknown };
    if (typeof j.error === 'string') return j.error;
    if (j.error && typeof (j.error as { message?: unknown }).message === 'string') return (j.error as { message: string }).message;
    if (typeof j.message === 'string') return j.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return bodyText.slice(0, 300);
}
