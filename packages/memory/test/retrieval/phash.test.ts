import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { decodeBase64Media, MediaError, sniffImageFormat } from '../../src/retrieval/media';
import {
  decodeImageToGray,
  findNearDuplicates,
  hammingDistance,
  imageDhash,
  imagePhash,
  isNearDuplicate,
  NEAR_DUPLICATE_THRESHOLD,
} from '../../src/retrieval/phash';

type Painter = (x: number, y: number) => [number, number, number];

function rgba(width: number, height: number, paint: Painter): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const [r, g, b] = paint(x, y);
    const i = 4 * (y * width + x);
    data[i] = r;
    data[i + 1] = g;
    data[i + 2] = b;
    data[i + 3] = 255;
  }
  return data;
}

function png(width: number, height: number, paint: Painter): Buffer {
  const img = new PNG({ width, height });
  rgba(width, height, paint).copy(img.data);
  return PNG.sync.write(img);
}

const clamp = (v: number) => Math.max(0, Math.min(255, Math.round(v)));
/** A scene: a sky gradient, a sun, a dark hill. */
const scene: Painter = (x, y) => {
  const sun = (x - 60) ** 2 + (y - 30) ** 2 < 15 ** 2;
  const hill = y > 70 + 20 * Math.sin(x / 20);
  if (hill) return [30, 90, 40];
  if (sun) return [250, 220, 60];
  return [clamp(100 + y), clamp(150 + y / 2), 230];
};
/** The same scene, brighter, with deterministic noise. */
const altered: Painter = (x, y) => scene(x, y).map((c, i) => clamp(c * 1.08 + 6 + (((x * 31 + y * 17 + i * 7) % 11) - 5))) as [number, number, number];
/** Something else: a checkerboard with a diagonal band. */
const unrelated: Painter = (x, y) => ((Math.floor(x / 16) + Math.floor(y / 16)) % 2 === 0 || Math.abs(x - y) < 8 ? [240, 240, 240] : [20, 20, 20]);

describe('perceptual hash', () => {
  const original = png(128, 128, scene);
  const copy = png(128, 128, altered);
  const resized = png(200, 200, (x, y) => scene(Math.floor((x * 128) / 200), Math.floor((y * 128) / 200)));
  const other = png(128, 128, unrelated);

  it('is 16 hex digits and deterministic', () => {
    expect(imagePhash(original)).toMatch(/^[0-9a-f]{16}$/);
    expect(imagePhash(original)).toBe(imagePhash(Buffer.from(original)));
  });

  it('matches an altered or resized copy and rejects an unrelated image', () => {
    const h = imagePhash(original);
    expect(hammingDistance(h, imagePhash(copy))).toBeLessThanOrEqual(4);
    expect(hammingDistance(h, imagePhash(resized))).toBeLessThanOrEqual(4);
    expect(hammingDistance(h, imagePhash(other))).toBeGreaterThan(NEAR_DUPLICATE_THRESHOLD + 6);
    expect(isNearDuplicate(h, imagePhash(copy))).toBe(true);
    expect(isNearDuplicate(h, imagePhash(other))).toBe(false);
  });

  it('dHash agrees', () => {
    const h = imageDhash(original);
    expect(hammingDistance(h, imageDhash(copy))).toBeLessThanOrEqual(6);
    expect(hammingDistance(h, imageDhash(other))).toBeGreaterThan(NEAR_DUPLICATE_THRESHOLD);
  });

  it('decodes JPEG, and a JPEG of the scene matches its PNG', () => {
    const jpg = jpeg.encode({ width: 128, height: 128, data: rgba(128, 128, scene) }, 75).data;
    expect(sniffImageFormat(jpg)).toBe('jpeg');
    expect(hammingDistance(imagePhash(jpg), imagePhash(original))).toBeLessThanOrEqual(4);
  });

  it('composites transparency on white', () => {
    const img = new PNG({ width: 2, height: 1 });
    img.data.set([0, 0, 0, 0, 0, 0, 0, 255]);
    const gray = decodeImageToGray(PNG.sync.write(img));
    expect(Array.from(gray.pixels)).toEqual([255, 0]);
  });

  it('refuses what it cannot decode', () => {
    expect(() => imagePhash(Buffer.from('GIF89a....'))).toThrow(MediaError);
    expect(() => imagePhash(Buffer.from('hello'))).toThrow(/not a PNG or JPEG/);
    const truncated = original.subarray(0, 60);
    expect(() => imagePhash(truncated)).toThrow(MediaError);
  });

  it('finds near-duplicates among candidates, closest first', () => {
    const h = imagePhash(original);
    const found = findNearDuplicates(h, [
      { id: 'other', phash: imagePhash(other) },
      { id: 'copy', phash: imagePhash(copy) },
      { id: 'same', phash: h },
      { id: 'none', phash: null },
    ]);
    expect(found.map((f) => f.id)).toEqual(['same', 'copy']);
    expect(found[0].distance).toBe(0);
  });

  it('hammingDistance counts bits and validates input', () => {
    expect(hammingDistance('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance('0000000000000001', '0000000000000003')).toBe(1);
    expect(() => hammingDistance('xyz', '0000000000000000')).toThrow(RangeError);
  });
});

describe('decodeBase64Media', () => {
  const bytes = png(8, 8, scene);

  it('decodes standard, URL-safe and data-URL base64, ignoring whitespace', () => {
    expect(decodeBase64Media(bytes.toString('base64'), 1 << 20).bytes.equals(bytes)).toBe(true);
    expect(decodeBase64Media(bytes.toString('base64url'), 1 << 20).bytes.equals(bytes)).toBe(true);
    const wrapped = bytes.toString('base64').replace(/(.{60})/g, '$1\n');
    expect(decodeBase64Media(wrapped, 1 << 20).bytes.equals(bytes)).toBe(true);
    const d = decodeBase64Media(`data:image/png;base64,${bytes.toString('base64')}`, 1 << 20);
    expect(d.declaredType).toBe('image/png');
    expect(sniffImageFormat(d.bytes)).toBe('png');
  });

  it.each([
    ['not base64!!', 'invalid_base64'],
    ['', 'invalid_base64'],
    ['abcde', 'invalid_base64'],
    ['ab=c', 'invalid_base64'],
    ['ab+c_d', 'invalid_base64'],
  ])('rejects %j', (input, code) => {
    try {
      decodeBase64Media(input, 1000);
      throw new Error('should have thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(MediaError);
      expect((err as MediaError).code).toBe(code);
    }
  });

  it('enforces the size cap before and after decoding', () => {
    const b64 = Buffer.alloc(1000, 7).toString('base64');
    expect(() => decodeBase64Media(b64, 999)).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
    expect(decodeBase64Media(b64, 1000).bytes.length).toBe(1000);
  });
});
