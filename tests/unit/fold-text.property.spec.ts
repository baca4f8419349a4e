/**
 * The text fold as a property: for any text, plain ASCII or not, `foldText` gives what its definition says (NFD,
 * combining marks removed, lower case), so the query side and the stored side fold alike whichever way it takes.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { foldText, textWords } from '../../shared-schema/ports/text-search.js';

const byDefinition = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();

/** Titles as partners write them: ASCII words, accented letters, combining marks, digits and signs. */
const pieces = fc.constantFrom('Café', 'CAFÉ', 'cafe\u0301', 'Ação', 'tênis', 'Straße', 'İstanbul', 'ǅ', 'ﬁ', '½', '€');
const text = fc
  .array(fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 12 }), fc.string({ maxLength: 6 }), pieces), {
    maxLength: 8,
  })
  .map((parts) => parts.join(' '));

describe('foldText', () => {
  it('folds every text as its definition says, ASCII or not', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(foldText(s)).to.equal(byDefinition(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('folds accented and upper-case words to the words an ASCII query types', () => {
    expect(textWords('Café TÊNIS Ação-2x')).to.deep.equal(['cafe', 'tenis', 'acao', '2x']);
    expect(textWords('CAFE tenis')).to.deep.equal(['cafe', 'tenis']);
  });
});
