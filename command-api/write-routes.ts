/**
 * Every write route of the command door, by `METHOD /path` (shared-schema/routes.ts): what a process that serves the
 * command door (the embedded service, the command process of the distributed topology) hands to it, so that the
 * wiring in infra/ never reaches into the route modules themselves.
 */
import { coreWriteRoutes, type WriteHandler } from './app.js';
import { batchWriteRoutes } from './routes/batch.js';
import { commerceWriteRoutes } from './routes/commerce.js';
import { webhookWriteRoutes } from './routes/webhooks.js';

export const WRITE_ROUTES: Record<string, WriteHandler> = {
  ...coreWriteRoutes,
  ...batchWriteRoutes,
  ...commerceWriteRoutes,
  ...webhookWriteRoutes,
};
