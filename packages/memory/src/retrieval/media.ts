/**
 * Validation of base64 media carried in requests (retrieval's `image`/`audio`/`video` fields):
 * strict base64 (standard or URL-safe alphabet, optional `data:` URL prefix, whitespace ignored), a size
 * cap checked before decoding, and a sniff of the image format from its magic bytes.
 */

export type MediaErrorCode = 'invalid_base64' | 'payload_too_large' | 'unsupported_image';

/** Maps to 400 (`invalid_base64`, `unsupported_image`) or 413 (`payload_too_large`) at the HTTP layer. */
export class MediaError extends Error {
  constructor(readonly code: MediaErrorCode, message: string) {
    super(message);
    this.name = 'MediaError';
  }
}

export interface DecodedMedia {
  bytes: Buffer;
  /** the MIME type of a `data:` URL prefix, if there was one */
  declaredType: string | null;
}

const DATA_URL_RE = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[\w.-]+)*;base64,/i;

/** Decode base64 media, at most `maxBytes` decoded bytes; throws MediaError. */
export function decodeBase64Media(input: string, maxBytes: number): DecodedMedia {
  if (typeof input !== 'string') throw new MediaError('invalid_base64', 'media must be a base64 string');
  let text = input.trim();
  let declaredType: string | null = null;
  const m = DATA_URL_RE.exec(text);
  if (m) {
    declaredType = m[1]?.toLowerCase() ?? null;
    text = text.slice(m[0].length);
  }
  text = text.replace(/\s+/g, '');
  // Reject on the encoded length, before decoding: no point allocating what will be refused.
  if (Math.floor((text.replace(/=+$/, '').length * 3) / 4) > maxBytes) {
    throw new MediaError('payload_too_large', `media is larger than ${maxBytes} bytes`);
  }
  if (text.length === 0) throw new MediaError('invalid_base64', 'media is empty');
  const urlSafe = /[-_]/.test(text);
  const alphabet = urlSafe ? /^[A-Za-z0-9\-_]*={0,2}$/ : /^[A-Za-z0-9+/]*={0,2}$/;
  if (!alphabet.test(text)) throw new MediaError('invalid_base64', 'media is not valid base64');
  const body = text.replace(/=+$/, '');
  if (body.length % 4 === 1) throw new MediaError('invalid_base64', 'media is not valid base64 (truncated)');
  if (text.includes('=') && text.length % 4 !== 0) throw new MediaError('invalid_base64', 'media is not valid base64 (bad padding)');
  const bytes = Buffer.from(body, urlSafe ? 'base64url' : 'base64');
  if (bytes.length > maxBytes) throw new MediaError('payload_too_large', `media is larger than ${maxBytes} bytes`);
  if (bytes.length === 0) throw new MediaError('invalid_base64', 'media is empty');
  return { bytes, declaredType };
}

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp';

/** The image format from the first bytes, or null. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | null {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return 'gif';
  if (b.length >= 12 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return 'webp';
  if (b.length >= 2 && b[0] === 0x42 && b[1] === 0x4d) return 'bmp';
  return null;
}
