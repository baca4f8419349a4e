/**
 * What the operator reads of the log and does with the clock, behind the admin token:
 *
 * - GET  /admin/v1/streams/{stream}    → {stream, events} (404: no event in it)
 * - GET  /admin/v1/clock               → {now, manual}
 * - POST /admin/v1/clock {advance_ms}  → moves the manual clock (409 unless CLOCK=manual), then waits for what
 *                                        became due (`onClockMoved`)
 */
import type Router from '@koa/router';
import { ProblemError, fieldError, invalid, notFound } from '../../../shared-schema/contract/problems.js';
import { ManualClock, type Clock } from '../../../shared-schema/ports/clock.js';
import type { EventStore } from '../../../shared-schema/ports/event-store.js';
import { readJson } from './json-body.js';

export function streamRoutes(router: Router, log: Pick<EventStore, 'readStream'>): void {
  router.get('/streams/:stream', async (ctx) => {
    const events = await log.readStream(ctx.params.stream);
    if (events.length === 0) throw notFound('No such stream.');
    ctx.body = { stream: ctx.params.stream, events };
  });
}

export function clockRoutes(router: Router, clock: Clock, onClockMoved?: () => Promise<void> | undefined): void {
  router.get('/clock', (ctx) => {
    ctx.body = { now: clock.now().toISOString(), manual: clock instanceof ManualClock };
  });
  router.post('/clock', async (ctx) => {
    const body = await readJson(ctx);
    if (!(clock instanceof ManualClock))
      throw new ProblemError(409, [
        fieldError('', 'clock_not_manual', 'Start the service with CLOCK=manual to move the clock.'),
      ]);
    const ms = body.advance_ms;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0)
      throw invalid([fieldError('advance_ms', 'integer', 'advance_ms: a non-negative integer.')]);
    const now = clock.advance(ms);
    await onClockMoved?.();
    ctx.body = { now: now.toISOString(), manual: true };
  });
}
