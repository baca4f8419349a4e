// The fetcher's default resolver is never asked about special-use names (test host names stay on this machine).
import { expect } from 'chai';

describe('special-use names (never sent to a resolver)', () => {
  it('recognises .test, .example, .invalid, .localhost and .local names, and nothing else', async () => {
    const { isSpecialUseName } = await import('../../infra/adapters/cover/cover-fetcher.js');
    for (const name of [
      'shop.test',
      'cdn.shop.test',
      'test',
      'a.example',
      'x.invalid',
      'localhost',
      'app.localhost',
      'printer.local',
      'CDN.SHOP.TEST.',
    ]) {
      expect(isSpecialUseName(name), name).to.equal(true);
    }
    for (const name of ['shop.com', 'testing.com', 'example.com.br', 'mytest', 'local.shop.com'])
      expect(isSpecialUseName(name), name).to.equal(false);
  });

  it('the default fetcher refuses an unmapped special-use name as image_unreachable, opening no socket', async () => {
    const { createCoverFetcher } = await import('../../infra/adapters/cover/cover-fetcher.js');
    const net = await import('node:net');
    // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be put back as it was; called with its socket
    const original = net.Socket.prototype.connect;
    let connects = 0;
    net.Socket.prototype.connect = function (this: unknown, ...args: unknown[]) {
      connects += 1;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      const result = await createCoverFetcher({})('https://cdn.shop.test/1.jpg', ['shop.test', 'cdn.shop.test']);
      expect(result.ok).to.equal(false);
      expect(result.reasons[0].code).to.equal('image_unreachable');
      expect(connects).to.equal(0);
    } finally {
      net.Socket.prototype.connect = original;
    }
  });
});
