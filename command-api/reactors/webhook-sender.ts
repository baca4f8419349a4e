/**
 * The webhook sender: pushes each partner's notifications (the notifications read model, the pull feed's source) to
 * the endpoint the partner registered, in feed order, signed (shared-schema/domain/webhooks.ts), one at a time per endpoint.
 *
 * A notification that fails (no 2xx, no answer, a refused address) is tried again after growing waits by the injected
 * clock (1 min, doubled per try, at most 1 h) and given up 24 h after its first try; the ones after it wait behind it,
 * so an endpoint receives the feed in order. Every attempt is kept in the endpoint's delivery document (the newest
 * `ATTEMPTS_KEPT`), which `GET /v1/webhook` shows. Where each endpoint is lives in that document too, so a restart
 * resumes there: a notification whose success was not recorded (a crash between the answer and the save) is sent
 * again, with the same `Webhook-Id` for the receiver to recognise.
 *
 * It scans every `intervalMs` of real time and at once when the operator moves a manual clock.
 */
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { WebhookPoster } from '../../shared-schema/ports/webhook-poster.js';
import {
  NOTIFICATIONS,
  notificationView,
  type NotificationDoc,
} from '../../shared-schema/read-models/notifications.js';
import {
  WEBHOOKS,
  WEBHOOK_DELIVERIES,
  type DeliveryAttempt,
  type WebhookDeliveryDoc,
  type WebhookDoc,
} from '../../shared-schema/read-models/webhooks.js';
import { webhookSignature, type WebhookKey } from '../../shared-schema/domain/webhooks.js';
import { PeriodicScan } from './periodic-scan.js';

export const RETRY_FIRST_MS = 60_000;
export const RETRY_MAX_MS = 60 * 60_000;
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
export const ATTEMPTS_KEPT = 20;

/** The wait before try `tries + 1` after `tries` failed ones: 1 min, doubled per try, at most 1 h. */
export const retryWait = (tries: number): number => Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (tries - 1));

export interface WebhookSenderOptions {
  reads: ReadStore;
  clock: Clock;
  key: WebhookKey;
  poster: WebhookPoster;
  /** Real-time period between scans. */
  intervalMs: number;
  /** Notifications sent per endpoint and scan. Default 100. */
  perScan?: number;
  /** Endpoints served at once (a slow one holds only its own slot). Default 8. */
  concurrency?: number;
  onError?: (err: unknown) => void;
}

export class WebhookSender extends PeriodicScan<void> {
  constructor(private readonly options: WebhookSenderOptions) {
    super(options.intervalMs, undefined, options.onError);
  }

  protected async scanOnce(): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const endpoints = await this.options.reads.find<WebhookDoc>(WEBHOOKS, {
        ...(after ? { after: [after] } : {}),
        limit: 200,
      });
      const slots = Math.max(1, this.options.concurrency ?? 8);
      for (let i = 0; i < endpoints.length && !this.stopped; i += slots) {
        await Promise.all(
          endpoints
            .slice(i, i + slots)
            .map((endpoint) => this.deliver(endpoint).catch((err: unknown) => this.options.onError?.(err))),
        );
      }
      const last = endpoints[endpoints.length - 1];
      if (endpoints.length < 200 || !last) return;
      after = last._id;
    }
  }

  private async deliver(endpoint: WebhookDoc): Promise<void> {
    const { reads, clock, poster } = this.options;
    const state: WebhookDeliveryDoc = (await reads.get<WebhookDeliveryDoc>(
      WEBHOOK_DELIVERIES,
      endpoint.endpoint_id,
    )) ?? {
      _id: endpoint.endpoint_id,
      partner_id: endpoint.partner_id,
      env: endpoint.env,
      after: [endpoint.from_position, 0, ''],
      retry: null,
      attempts: [],
    };
    const tenant = { partnerId: endpoint.partner_id, env: endpoint.env };
    const secret = this.options.key.secretFor(tenant, endpoint.endpoint_id);
    if (state.retry && clock.now().getTime() < Date.parse(state.retry.next_at)) return;
    // One read per endpoint and scan, not one per notification; a failure ends the page (the rest waits behind it).
    const page = await reads.find<NotificationDoc>(NOTIFICATIONS, {
      where: { partner_id: endpoint.partner_id, env: endpoint.env },
      orderBy: [{ field: 'position' }, { field: 'seq' }],
      after: state.after,
      limit: this.options.perScan ?? 100,
    });
    for (const next of page) {
      if (this.stopped) return;
      const now = clock.now();
      const body = JSON.stringify(notificationView(next));
      const timestamp = Math.floor(now.getTime() / 1000);
      const result = await poster({
        url: endpoint.url,
        body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': next.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(secret, next.id, timestamp, body),
        },
      });
      const ok = 'status' in result && result.status >= 200 && result.status < 300;
      const attempt: DeliveryAttempt = {
        notification_id: next.id,
        attempted_at: now.toISOString(),
        status: 'status' in result ? result.status : null,
        ok,
        error: ok ? null : 'status' in result ? `the endpoint answered ${result.status}` : result.error,
      };
      const retry = state.retry?.notification_id === next.id ? state.retry : null;
      const firstAt = retry ? Date.parse(retry.first_at) : now.getTime();
      const done = ok || now.getTime() - firstAt >= GIVE_UP_AFTER_MS;
      if (!ok && done) attempt.error = `${attempt.error ?? 'failed'}; given up 24 h after the first try`;
      state.attempts = [attempt, ...state.attempts].slice(0, ATTEMPTS_KEPT);
      if (done) {
        state.after = [next.position, next.seq, next._id];
        state.retry = null;
      } else {
        const tries = (retry?.tries ?? 0) + 1;
        state.retry = {
          notification_id: next.id,
          first_at: new Date(firstAt).toISOString(),
          tries,
          next_at: new Date(now.getTime() + retryWait(tries)).toISOString(),
        };
      }
      await reads.transact((tx) => tx.put(WEBHOOK_DELIVERIES, state));
      if (!done) return;
    }
  }
}
