/**
 * The contract's rules on what one product holds, each once: the write side's validation and decider, and the
 * cover check, apply them from here.
 */
import { fieldError, type FieldError } from '../contract/problems.js';

/** `not_higher`: a 'from' price (`original_price_cents`) must be greater than `price_cents`. */
export function notHigher(priceCents: unknown, originalPriceCents: unknown): FieldError | null {
  if (typeof priceCents !== 'number' || typeof originalPriceCents !== 'number' || originalPriceCents > priceCents)
    return null;
  return fieldError('original_price_cents', 'not_higher', "The 'from' price must be greater than price_cents.");
}

/** The image formats a cover may have. */
export const COVER_FORMATS = ['jpeg', 'png', 'webp'] as const;
export type CoverFormat = (typeof COVER_FORMATS)[number];
export const COVER_MIN_SIDE = 500;

export interface CoverRefusal {
  code: 'image_type' | 'image_too_small';
  message: string;
}

/**
 * The cover rules: a JPEG, PNG or WebP image whose shorter side is at least 500 px. `format` is what the image's
 * bytes are (null: none of the cover formats); null when the cover passes.
 */
export function judgeCover(format: string | null, width: number, height: number): CoverRefusal | null {
  if (format === null || !(COVER_FORMATS as readonly string[]).includes(format)) {
    return { code: 'image_type', message: 'the cover is not a JPEG, PNG or WebP image' };
  }
  if (Math.min(width, height) < COVER_MIN_SIDE) {
    return {
      code: 'image_too_small',
      message: `the cover is ${width}×${height} px; its shorter side must be at least ${COVER_MIN_SIDE} px`,
    };
  }
  return null;
}
