/**
 * Koa prints an error it meets outside the middleware (a body stream that fails mid-answer) to stderr, stack and all,
 * unless the app listens for it: every Koa app of ours logs it through pino instead (one JSON line), and a client
 * that went away at info.
 */
import { expect } from 'chai';
import http from 'node:http';
import { Readable } from 'node:stream';
import pino from 'pino';
import { frontDoor } from '../../infra/http/front-door.js';
import { InProcessMessaging } from '../../infra/messaging/in-process.js';
import { systemClock } from '../../shared-schema/ports/clock.js';
import { isClientAbort } from '../../infra/http/client-abort.js';
import { until } from '../support/deadline.js';

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
      { log, baseUrl: 'http://127.0.0.1/v1', keys: async () => null, messaging, clock: systemClock },
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

  it('tells a client that went away from a fault of ours', () => {
    for (const code of ['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'HPE_INVALID_EOF_STATE']) {
      expect(isClientAbort(Object.assign(new Error('x'), { code })), code).to.equal(true);
    }
    expect(isClientAbort(new Error('request aborted'))).to.equal(true);
    expect(isClientAbort(new Error('SQLITE_BUSY'))).to.equal(false);
  });
});
