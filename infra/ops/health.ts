/**
 * Health and metrics on the admin port, answered before the admin app (so without the admin token):
 *
 * - `GET /admin/v1/health/live`: 200 while the process runs.
 * - `GET /admin/v1/health/ready`: 200 when both stores answer and every projection is within the lag bound, 503
 *   otherwise (and from the moment a shutdown begins). Parked projection events do not make it 503 (reads are still
 *   served; taking the instance out would stop every partner for the documents of one): the answer is 200 with
 *   `status: "degraded"`, `checks.parked_events` and the projection's check `degraded: N parked event(s)`.
 * - `GET /metrics`: Prometheus text. Decision: never behind the admin token — a scraper must not hold a credential
 *   that issues keys. It is open on the admin port (loopback by default; expose it only to the monitoring network),
 *   and when `METRICS_TOKEN` is set it needs `Authorization: Bearer <METRICS_TOKEN>` (Prometheus `authorization`).
 *   Its labels hold route templates, statuses, projection and queue names: no partner data.
 */
import type http from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { Operations } from './operations.js';
import type { ServiceMetrics } from './metrics.js';
import { writeProblem } from '../http/problem-answer.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { newRequestId } from '../../shared-schema/domain/ids.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/** What the health and metrics answers read of the operator surface. */
export type HealthSource = Pick<Operations, 'settings' | 'readiness'> & { metrics: Pick<ServiceMetrics, 'text'> };

const digest = (s: string) => createHash('sha256').update(s).digest();

function send(res: http.ServerResponse, status: number, type: string, body: string, head: boolean): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(head ? undefined : body);
}

/**
 * `problemBaseUrl`: the partner API's `{base_url}`. The 401 and 500 of `/metrics` are written by the doors' one
 * error answer (infra/http/problem-answer.ts), like every admin error: the same status, headers, body (with a
 * request id, in `X-Request-Id` too) and logging. (Readiness's 503 is the probe's answer, not an error: it keeps its
 * `{status, checks}` body.)
 */
export function healthAndMetricsHandler(
  ops: HealthSource,
  admin: Handler,
  options: { problemBaseUrl: string; log: Logger },
): Handler {
  const metricsToken = ops.settings.metricsToken ? digest(ops.settings.metricsToken) : null;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) return admin(req, res);
    const json = (status: number, body: unknown) => send(res, status, 'application/json', JSON.stringify(body), head);
    const problem = (err: unknown) => {
      const requestId = newRequestId();
      res.setHeader('Cache-Control', 'no-store');
      writeProblem(req, res, err, {
        baseUrl: options.problemBaseUrl,
        requestId,
        log: options.log.child({ request_id: requestId }),
      });
    };
    switch (path) {
      case '/admin/v1/health/live':
        return json(200, { status: 'live' });
      case '/admin/v1/health/ready':
        ops.readiness().then(
          (r) =>
            json(r.ready ? 200 : 503, {
              status: r.ready ? (r.degraded ? 'degraded' : 'ready') : 'not_ready',
              checks: r.checks,
            }),
          () => json(503, { status: 'not_ready' }),
        );
        return;
      case '/metrics': {
        if (metricsToken) {
          const got = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
          if (!timingSafeEqual(digest(got), metricsToken))
            return problem(
              new ProblemError(401, [], 'Send `Authorization: Bearer <METRICS_TOKEN>`.', {
                'WWW-Authenticate': 'Bearer realm="metrics"',
              }),
            );
        }
        ops.metrics.text().then(
          (m) => send(res, 200, m.contentType, m.body, head),
          (err: unknown) => problem(err),
        );
        return;
      }
      default:
        return admin(req, res);
    }
  };
}
