/**
 * Every read route of the query door under `/v1`, by `METHOD /path` (shared-schema/routes.ts): what a process that
 * serves the query door (the embedded service, the query process of the distributed topology) hands to it, so that
 * the wiring in infra/ never reaches into the route modules themselves.
 */
import type { ReadRoute } from './app.js';
import { catalogReadRoutes } from './routes/catalog.js';
import { commerceReadRoutes } from './routes/commerce.js';
import { eventsReadRoutes } from './routes/events.js';
import { insightsReadRoutes } from './routes/insights.js';
import { jobsReadRoutes } from './routes/jobs.js';
import { ledgerReadRoutes } from './routes/ledger.js';
import { webhookReadRoutes } from './routes/webhooks.js';

export const READ_ROUTES: Record<string, ReadRoute> = {
  ...catalogReadRoutes,
  ...jobsReadRoutes,
  ...commerceReadRoutes,
  ...eventsReadRoutes,
  ...webhookReadRoutes,
  ...ledgerReadRoutes,
  ...insightsReadRoutes,
};
