/**
 * Every write route of the command door, each declared once beside its handler (command-api/routes/*): what a
 * process that serves the command door hands to it, and what the wiring adds to the contract's route table, so that
 * infra/ never reaches into the route modules themselves.
 */
import type { WriteRoute } from './app.js';
import { batchWriteRoutes } from './routes/batch.js';
import { catalogWriteRoutes } from './routes/catalog.js';
import { commerceWriteRoutes } from './routes/commerce.js';
import { webhookWriteRoutes } from './routes/webhooks.js';

export const WRITE_ROUTES: readonly WriteRoute[] = [
  ...catalogWriteRoutes,
  ...batchWriteRoutes,
  ...commerceWriteRoutes,
  ...webhookWriteRoutes,
];
