// Image bytes for the cover-check tests: real files made with sharp, and hand-built hostile ones.
import zlib from 'node:zlib';
import sharp from 'sharp';

export type ImageFormat = 'jpeg' | 'png' | 'webp';
export const IMAGE_SIZES = ['800x600', '499x800', '500x500'] as const;

/** `{ '800x600.jpg': Buffer, '499x800.png': …, '600x600.gif': … }` */
export async function makeTestImages(): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  for (const size of IMAGE_SIZES) {
    const [width, height] = size.split('x').map(Number);
    const base = () => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } });
    out[`${size}.jpg`] = await base().jpeg().toBuffer();
    out[`${size}.png`] = await base().png().toBuffer();
    out[`${size}.webp`] = await base().webp().toBuffer();
  }
  out['600x600.gif'] = await sharp({ create: { width: 600, height: 600, channels: 3, background: '#3366cc' } })
    .gif()
    .toBuffer();
  return out;
}

/**
 * A valid PNG whose IHDR claims `width`×`height` (8-bit RGB) with one tiny IDAT: opening it for real would mean
 * allocating width×height×3 bytes. Chunks carry correct CRCs, so only a pixel limit stops a decoder.
 */
export function pngClaiming(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(64))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** CRC-32 (IEEE 802.3, as PNG uses it). */
export function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k += 1) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
