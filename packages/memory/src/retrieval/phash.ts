/**
 * Perceptual hashes of images, for matching the same picture or a near-duplicate (re-encoded, resized,
 * slightly edited) offline, without any model.
 *
 * - pHash (the one stored in `AssetRef.phash`): grayscale, area-resize to 32×32, 2-D DCT, keep the
 *   8×8 lowest frequencies, one bit per coefficient: above the median or not. Robust to scaling,
 *   compression and small edits.
 * - dHash: grayscale 9×8, one bit per horizontal neighbour pair: brighter to the right (by more than 2
 *   grey levels, so flat areas do not flip with noise) or not. Cheaper, less robust; a second opinion.
 *
 * Both are 64 bits, written as 16 lowercase hex digits. Similar images differ in few bits (Hamming
 * distance); unrelated images differ in about 32.
 */
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { MediaError, sniffImageFormat } from './media';

/** Default Hamming distance (of 64 bits) under which two images count as near-duplicates. */
export const NEAR_DUPLICATE_THRESHOLD = 10;

/** Largest image decoded (pixels): guards against decompression bombs. */
const MAX_PIXELS = 40_000_000;

export interface GrayImage {
  width: number;
  height: number;
  /** luminance 0..255, row-major */
  pixels: Float32Array;
}

/** Decode PNG or JPEG bytes to grayscale; throws MediaError for other formats or corrupt data. */
export function decodeImageToGray(bytes: Uint8Array): GrayImage {
  const format = sniffImageFormat(bytes);
  let width: number;
  let height: number;
  let rgba: Uint8Array;
  try {
    if (format === 'png') {
      const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      // IHDR width/height at bytes 16..23: refuse giant canvases before allocating them
      if (buf.length >= 24 && buf.readUInt32BE(16) * buf.readUInt32BE(20) > MAX_PIXELS) {
        throw new MediaError('unsupported_image', 'image is too large to decode');
      }
      const png = PNG.sync.read(buf);
      ({ width, height } = png);
      rgba = png.data;
    } else if (format === 'jpeg') {
      const img = jpeg.decode(bytes, { useTArray: true, maxResolutionInMP: MAX_PIXELS / 1e6, maxMemoryUsageInMB: 512 });
      ({ width, height } = img);
      rgba = img.data;
    } else {
      throw new MediaError('unsupported_image', format ? `cannot decode ${format} images (PNG and JPEG only)` : 'not a PNG or JPEG image');
    }
  } catch (err) {
    if (err instanceof MediaError) throw err;
    throw new MediaError('unsupported_image', `image could not be decoded: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (width < 1 || height < 1) throw new MediaError('unsupported_image', 'image has no pixels');
  const pixels = new Float32Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    const a = rgba[4 * i + 3] / 255;
    // ITU-R BT.601 luma; transparent pixels are composited on white so a transparent background reads as one colour
    const y = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2];
    pixels[i] = y * a + 255 * (1 - a);
  }
  return { width, height, pixels };
}

/** Area-average resize (each output pixel is the mean of the input pixels it covers). */
export function resizeGray(img: GrayImage, w: number, h: number): Float32Array {
  const out = new Float32Array(w * h);
  const sx = img.width / w;
  const sy = img.height / h;
  for (let oy = 0; oy < h; oy++) {
    const y0 = oy * sy;
    const y1 = y0 + sy;
    for (let ox = 0; ox < w; ox++) {
      const x0 = ox * sx;
      const x1 = x0 + sx;
      let sum = 0;
      let area = 0;
      for (let y = Math.floor(y0); y < Math.min(img.height, Math.ceil(y1)); y++) {
        const wy = Math.min(y + 1, y1) - Math.max(y, y0);
        if (wy <= 0) continue;
        for (let x = Math.floor(x0); x < Math.min(img.width, Math.ceil(x1)); x++) {
          const wx = Math.min(x + 1, x1) - Math.max(x, x0);
          if (wx <= 0) continue;
          sum += img.pixels[y * img.width + x] * wx * wy;
          area += wx * wy;
        }
      }
      out[oy * w + ox] = area > 0 ? sum / area : 0;
    }
  }
  return out;
}

function bitsToHex(bits: boolean[]): string {
  let hex = '';
  for (let i = 0; i < 64; i += 4) hex += ((+bits[i] << 3) | (+bits[i + 1] << 2) | (+bits[i + 2] << 1) | +bits[i + 3]).toString(16);
  return hex;
}

const N = 32;
/** DCT-II basis, computed once (a constant table, not state). */
const COS = (() => {
  const t = new Float64Array(N * N);
  for (let k = 0; k < N; k++) for (let n = 0; n < N; n++) t[k * N + n] = Math.cos((Math.PI / N) * (n + 0.5) * k);
  return t;
})();

export function phashGray(img: GrayImage): string {
  const small = resizeGray(img, N, N);
  // separable 2-D DCT, only the 8 lowest frequencies in each direction are needed
  const rows = new Float64Array(N * 8);
  for (let y = 0; y < N; y++) for (let u = 0; u < 8; u++) {
    let s = 0;
    for (let x = 0; x < N; x++) s += small[y * N + x] * COS[u * N + x];
    rows[y * 8 + u] = s;
  }
  const coeffs: number[] = [];
  for (let v = 0; v < 8; v++) for (let u = 0; u < 8; u++) {
    let s = 0;
    for (let y = 0; y < N; y++) s += rows[y * 8 + u] * COS[v * N + y];
    coeffs.push(s);
  }
  // the DC term is the mean brightness: left out of the median so it does not skew it
  const sorted = coeffs.slice(1).sort((a, b) => a - b);
  const median = (sorted[31] + sorted[32]) / 2;
  return bitsToHex(coeffs.map((c) => c > median));
}

export function dhashGray(img: GrayImage): string {
  const small = resizeGray(img, 9, 8);
  const bits: boolean[] = [];
  // "brighter by more than 2 levels": flat areas read as 0 instead of flipping with noise
  for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) bits.push(small[y * 9 + x + 1] > small[y * 9 + x] + 2);
  return bitsToHex(bits);
}

/** 64-bit pHash (16 hex digits) of PNG or JPEG bytes; throws MediaError. */
export function imagePhash(bytes: Uint8Array): string {
  return phashGray(decodeImageToGray(bytes));
}

export function imageDhash(bytes: Uint8Array): string {
  return dhashGray(decodeImageToGray(bytes));
}

/** Differing bits between two 64-bit hashes in hex. */
export function hammingDistance(a: string, b: string): number {
  if (!/^[0-9a-f]{16}$/i.test(a) || !/^[0-9a-f]{16}$/i.test(b)) throw new RangeError('hashes must be 16 hex digits');
  let x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}

export function isNearDuplicate(a: string, b: string, threshold = NEAR_DUPLICATE_THRESHOLD): boolean {
  return hammingDistance(a, b) <= threshold;
}

/** Candidates (e.g. units with their image assets' hashes) within the threshold, closest first. */
export function findNearDuplicates(
  query: string,
  candidates: Iterable<{ id: string; phash: string | null }>,
  threshold = NEAR_DUPLICATE_THRESHOLD,
): Array<{ id: string; distance: number }> {
  const best = new Map<string, number>();
  for (const c of candidates) {
    if (!c.phash) continue;
    const d = hammingDistance(query, c.phash);
    if (d <= threshold && d < (best.get(c.id) ?? Infinity)) best.set(c.id, d);
  }
  return [...best.entries()].map(([id, distance]) => ({ id, distance })).sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1));
}
