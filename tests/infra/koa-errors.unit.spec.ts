/**
 * Koa prints an error it meets outside the middleware (a body stream that fails mid-answer) to stderr, stack and all,
 * unless the app listens for it: every Koa app of ours logs it through pino instead (one JSON line), and a client
 * that went away at info.
 */
import { expect } from 'chai';
import http from 'node:http';
import { Readable } from 'node:stream';
import pino from 'pino';
import Koa from 'koa';
import { frontDoor } from '../../infra/http/front-door.js';
import { createAdminApi } from '../../infra/http/admin/app.js';
import type { CommandDeps } from '../../command-api/services/context.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { systemClock } from '../../shared-schema/ports/clock.js';
import { isClientAbort } from '../../infra/http/client-abort.js';
import { until } from '../support/deadline.js';
import { createRedirector } from '../../command-api/redirector.js';
import { writeProblem } from '../../infra/http/problem-answer.js';
import { listen, portOf, type Handler } from '../../infra/http/gateway.js';
import { healthAndMetricsHandler, type HealthSource } from '../../infra/ops/health.js';
import { DEFAULT_OPERATIONS_SETTINGS } from '../../infra/ops/settings.js';

type Line = { level: number; msg: string; request_id?: string; err?: { message: string; stack?: string } };

/** A logger at info whose lines are kept, parsed. */
function logLines(): { lines: Line[]; log: pino.Logger } {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  return { lines, log };
}

/** `count` faults ('the disk went away') logged the one way: at error, as unhandled, with request id and stack. */
function expectFaultsLogged(lines: Line[], count: number): void {
  const faults = lines.filter((l) => l.err?.message === 'the disk went away');
  expect(faults).to.have.length(count);
  for (const f of faults) {
    expect(f).to.include({ level: 50, msg: 'unhandled error' });
    expect(f.request_id).to.be.a('string');
    expect(f.err?.stack).to.match(/the disk went away\n\s+at /);
  }
}

describe('Koa errors go to the JSON log', () => {
  it('logs an answer stream that fails through pino, and leaves stderr alone', async () => {
    const lines: { level: number; msg: string; err?: { message: string } }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const messaging = new InProcessMessaging();
    const app = frontDoor(
      {
        public: async (ctx, next) => {
          if (ctx.path !== '/broken') return next();
          ctx.type = 'text/plain';
          ctx.body = new Readable({
            read() {
              this.destroy(new Error('the disk went away'));
            },
          });
        },
        routes: async () => undefined,
      },
      { log, baseUrl: 'http://127.0.0.1/v1', keys: async () => null, routes: [], messaging, clock: systemClock },
    );
    const printed: unknown[] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => void printed.push(args);
    const handle = app.callback();
    const server = http.createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const port = (server.address() as { port: number }).port;
      await fetch(`http://127.0.0.1:${port}/broken`)
        .then((r) => r.text())
        .catch(() => undefined);
      await until(() => lines.some((l) => l.err?.message === 'the disk went away'), 10_000, 'the error logged');
      expect(lines.find((l) => l.err?.message === 'the disk went away')).to.include({ level: 50 });
      expect(printed, 'nothing printed outside the log').to.deep.equal([]);
    } finally {
      console.error = consoleError;
      server.close();
      await messaging.close();
    }
  });

  it('every Koa app answers the same error with the same problem, and logs a fault with its stack and request id', async () => {
    const { lines, log } = logLines();
    const baseUrl = 'http://127.0.0.1/v1';
    // What middleware may throw: a fault of ours, and a 4xx in the http-errors style not meant for the client.
    const thrown: Record<string, () => Error> = {
      '/fault': () => new Error('the disk went away'),
      '/hidden-4xx': () => Object.assign(new Error('internal words'), { status: 400, expose: false }),
    };
    const messaging = new InProcessMessaging();
    const partner = frontDoor(
      {
        public: async (ctx, next) => {
          const make = thrown[ctx.path];
          if (!make) return next();
          throw make();
        },
        routes: async () => undefined,
      },
      { log, baseUrl, keys: async () => null, routes: [], messaging, clock: systemClock },
    );
    const admin = createAdminApi({
      deps: {} as CommandDeps,
      token: 'admin-token',
      problemBaseUrl: baseUrl,
      log,
      clock: systemClock,
      waitForPosition: async () => true,
      extend: (router) => {
        for (const [path, make] of Object.entries(thrown))
          router.get(path, () => {
            throw make();
          });
      },
    });
    const serve = async (app: Koa, ask: (port: number) => Promise<void>) => {
      const handle = app.callback();
      const server = http.createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1');
      try {
        await new Promise((resolve) => server.once('listening', resolve));
        await ask((server.address() as { port: number }).port);
      } finally {
        server.close();
      }
    };
    const answers = async (app: Koa, prefix: string, headers: Record<string, string> = {}) => {
      const got: Record<string, { status: number; body: Record<string, unknown> }> = {};
      await serve(app, async (port) => {
        for (const path of Object.keys(thrown)) {
          const r = await fetch(`http://127.0.0.1:${port}${prefix}${path}`, { headers });
          expect(r.headers.get('content-type'), path).to.match(/^application\/problem\+json/);
          const body = (await r.json()) as Record<string, unknown>;
          expect(body.request_id, path).to.equal(r.headers.get('x-request-id'));
          delete body.request_id;
          got[path] = { status: r.status, body };
        }
      });
      return got;
    };
    try {
      const fromPartner = await answers(partner, '');
      const fromAdmin = await answers(admin, '/admin/v1', { Authorization: 'Bearer admin-token' });
      expect(fromAdmin).to.deep.equal(fromPartner);
      expect(fromPartner['/hidden-4xx']).to.deep.equal({
        status: 400,
        body: { type: `${baseUrl}/problemas/400`, title: 'Bad Request', status: 400 },
      });
      expect(fromPartner['/fault'].status).to.equal(500);
      expect(fromPartner['/fault'].body.detail).to.match(/X-Request-Id/);
      expectFaultsLogged(lines, 2);
      expect(JSON.stringify(lines)).not.to.include('admin-token');
    } finally {
      await messaging.close();
    }
  });

  it('the redirector and /metrics answer a fault of theirs with the same problem as a Koa door, logged the same way', async () => {
    const { lines, log } = logLines();
    const baseUrl = 'http://127.0.0.1/v1';
    const fault = () => Promise.reject(new Error('the disk went away'));
    const messaging = new InProcessMessaging();
    const partner = frontDoor(
      {
        public: async () => {
          await fault();
        },
        routes: async () => undefined,
      },
      { log, baseUrl, keys: async () => null, routes: [], messaging, clock: systemClock },
    );
    // Every read of the redirector's store fails, as does the metrics registry.
    const reads = new Proxy({}, { get: () => fault });
    const redirector = createRedirector({ reads, clock: systemClock } as unknown as CommandDeps, log, {
      answerProblem: (req, res, err, requestId) =>
        writeProblem(req, res, err, { baseUrl, requestId, log: log.child({ request_id: requestId }) }),
      clientAddress: () => '127.0.0.1',
    });
    const ops: HealthSource = {
      settings: { ...DEFAULT_OPERATIONS_SETTINGS },
      readiness: () => fault(),
      metrics: { text: fault },
    };
    const metrics = healthAndMetricsHandler(ops, () => undefined, { problemBaseUrl: baseUrl, log });
    const answerOf = async (handler: Handler, path: string) => {
      const server = await listen(handler, 0, '127.0.0.1', baseUrl);
      try {
        const r = await fetch(`http://127.0.0.1:${portOf(server)}${path}`, { headers: { Accept: 'application/json' } });
        const body = (await r.json()) as Record<string, unknown>;
        expect(body.request_id, path).to.equal(r.headers.get('x-request-id'));
        delete body.request_id;
        const headers = Object.fromEntries(
          ['content-type', 'x-content-type-options', 'content-security-policy'].map((h) => [h, r.headers.get(h)]),
        );
        return { status: r.status, headers, body };
      } finally {
        server.close();
      }
    };
    try {
      const fromPartner = await answerOf(partner.callback(), '/anything');
      expect(fromPartner.status).to.equal(500);
      expect(fromPartner.headers['content-type']).to.equal('application/problem+json');
      expect(await answerOf(redirector, '/r/pt_x/loja/sku')).to.deep.equal(fromPartner);
      expect(await answerOf(metrics, '/metrics')).to.deep.equal(fromPartner);
      expectFaultsLogged(lines, 3);
    } finally {
      await messaging.close();
    }
  });

  it('tells a client that went away from a fault of ours', () => {
    for (const code of ['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'HPE_INVALID_EOF_STATE']) {
      expect(isClientAbort(Object.assign(new Error('x'), { code })), code).to.equal(true);
    }
    expect(isClientAbort(new Error('request aborted'))).to.equal(true);
    expect(isClientAbort(new Error('SQLITE_BUSY'))).to.equal(false);
  });
});
