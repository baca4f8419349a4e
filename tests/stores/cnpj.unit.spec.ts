import { expect } from 'chai';
import { normalizeCnpj, isValidCnpj } from '../../shared-schema/domain/cnpj.js';

const valid = (raw: string) => isValidCnpj(normalizeCnpj(raw));

describe('CNPJ', () => {
  it('normalizes by removing . / - and upper-casing', () => {
    expect(normalizeCnpj('12.abc.345/01de-35')).to.equal('12ABC34501DE35');
    expect(normalizeCnpj('11222333000181')).to.equal('11222333000181');
  });

  it('accepts the three examples of DECISIONS.md, with or without punctuation', () => {
    for (const raw of [
      '12.ABC.345/01DE-35',
      '00.000.000/0001-91',
      '11.222.333/0001-81',
      '12ABC34501DE35',
      '11222333000181',
    ])
      expect(valid(raw), raw).to.equal(true);
  });

  it('accepts lower-case input of an alphanumeric CNPJ', () => {
    expect(valid('12.abc.345/01de-35')).to.equal(true);
    expect(isValidCnpj('12abc34501de35')).to.equal(true);
  });

  it('refuses wrong check digits', () => {
    expect(valid('11.222.333/0001-82')).to.equal(false);
    expect(valid('11.222.333/0001-71')).to.equal(false);
    expect(valid('12.ABC.345/01DE-53')).to.equal(false);
    expect(valid('00.000.000/0001-90')).to.equal(false);
  });

  it('refuses any single changed digit of the base (mod 11 catches every one)', () => {
    const good = '11222333000181';
    for (let pos = 0; pos < 12; pos++) {
      for (let d = 0; d <= 9; d++) {
        if (String(d) === good[pos]) continue;
        const bad = good.slice(0, pos) + String(d) + good.slice(pos + 1);
        expect(isValidCnpj(bad), bad).to.equal(false);
      }
    }
  });

  it('refuses a wrong length', () => {
    expect(valid('11.222.333/0001-8')).to.equal(false);
    expect(valid('011.222.333/0001-81')).to.equal(false);
    expect(isValidCnpj('')).to.equal(false);
  });

  it('refuses letters in the check-digit positions and other characters', () => {
    expect(isValidCnpj('12ABC34501DEA5')).to.equal(false);
    expect(isValidCnpj('12ABC34501DE3A')).to.equal(false);
    expect(isValidCnpj('12ABC 4501DE35')).to.equal(false);
    expect(isValidCnpj('12ABC34501DE35'.replace('C', 'Ç'))).to.equal(false);
  });

  it('refuses fourteen copies of one character although their arithmetic passes', () => {
    // 00000000000000 passes the arithmetic (all sums 0 → digits 0 0); so does every repeated digit whose
    // digits happen to match, but they are refused as a rule.
    expect(isValidCnpj('00000000000000')).to.equal(false);
    for (let d = 0; d <= 9; d++) expect(isValidCnpj(String(d).repeat(14))).to.equal(false);
  });
});
