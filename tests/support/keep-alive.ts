/** One HTTP request over a keep-alive `http.Agent` (load tests and benchmarks; loopback only). */
import http from 'node:http';

export interface Reply {
  status: number;
  text: string;
}

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

export function send(
  agent: http.Agent,
  url: URL,
  method: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  if (url.hostname !== '127.0.0.1' && url.hostname !== '[::1]' && url.hostname !== 'localhost') {
    return Promise.reject(new Error(`refusing a non-loopback address: ${url.hostname}`));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        agent,
        method,
        headers:
          body === undefined
            ? headers
            : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
