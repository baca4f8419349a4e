import type http from 'node:http';
import { expect } from 'chai';
import { clientAddress } from '../../infra/http/client-address.js';

const request = (peer: string, forwardedFor?: string | string[]): http.IncomingMessage =>
  ({
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as http.IncomingMessage;

describe('clientAddress: the address the per-address brakes count by', () => {
  it('is the socket peer with no trusted proxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress(request('127.0.0.9', '198.51.100.8'), 0)).to.equal('127.0.0.9');
    expect(clientAddress(request('127.0.0.9'), 0)).to.equal('127.0.0.9');
  });

  it('behind N trusted proxies, is the Nth entry from the end: what the outermost one appended', () => {
    expect(clientAddress(request('10.0.0.1', '198.51.100.8, 203.0.113.5'), 1)).to.equal('203.0.113.5');
    expect(clientAddress(request('10.0.0.1', '198.51.100.8, 203.0.113.5, 10.0.0.2'), 2)).to.equal('203.0.113.5');
    expect(clientAddress(request('10.0.0.1', ['198.51.100.8', '203.0.113.5']), 1)).to.equal('203.0.113.5');
  });

  it('falls back to the first entry when fewer were written, and to the peer when there are none', () => {
    expect(clientAddress(request('10.0.0.1', '203.0.113.5'), 2)).to.equal('203.0.113.5');
    expect(clientAddress(request('10.0.0.1', ' , '), 1)).to.equal('10.0.0.1');
    expect(clientAddress(request('10.0.0.1'), 1)).to.equal('10.0.0.1');
  });
});
