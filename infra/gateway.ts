/**
 * The in-process gateway of the embedded default: GET/HEAD go to the query door, every other method to the
 * command door (nginx does the same in the distributed topology; see infra/deploy/). The public redirector
 * (`/p/…`, `/test/p/…`) writes clicks, so it is served by the write side's own handler even for a GET.
 */
import http from 'node:http';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export function gatewayHandler(command: Handler, query: Handler, redirect?: Handler): Handler {
  return (req, res) => {
    if (redirect && (req.url?.startsWith('/p/') || req.url?.startsWith('/test/p/'))) return redirect(req, res);
    return req.method === 'GET' || req.method === 'HEAD' ? query(req, res) : command(req, res);
  };
}

export async function listen(handler: Handler, port: number, host: string): Promise<http.Server> {
  const server = http.createServer({ keepAliveTimeout: 65_000 }, handler);
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export async function closeServer(server: http.Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

export function portOf(server: http.Server): number {
  const address = server.address();
  if (address && typeof address === 'object') return address.port;
  throw new Error('server is not listening on a TCP port');
}
