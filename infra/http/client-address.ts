/**
 * The client address of the per-address brakes (the public searches, the click redirector), one rule for every
 * door. Behind `trustedHops` proxies (Config.trustedProxyHops; nginx in the distributed topology) the client is the
 * `X-Forwarded-For` entry the outermost trusted proxy appended: the Nth from the end. Entries before it were written
 * by the client and are never believed. With no trusted proxy, or no such header, the socket's peer.
 */
import type http from 'node:http';

export function clientAddress(req: http.IncomingMessage, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? '';
  const header = req.headers['x-forwarded-for'];
  if (trustedHops <= 0 || header === undefined) return peer;
  const entries = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return peer;
  return entries[Math.max(0, entries.length - trustedHops)];
}
