/**
 * Every read route of the query door under `/v1`, each declared once beside its read (query-api/routes/*): what a
 * process that serves the query door hands to it, and what the wiring adds to the contract's route table, so that
 * infra/ never reaches into the route modules themselves.
 */
import type { ReadRoute } from './app.js';
import { catalogReadRoutes } from './routes/catalog.js';
import { commerceReadRoutes } from './routes/commerce.js';
import { eventsReadRoutes } from './routes/events.js';
import { insightsReadRoutes } from './routes/insights.js';
import { jobsReadRoutes } from './routes/jobs.js';
import { ledgerReadRoutes } from './routes/ledger.js';
import { webhookReadRoutes } from './routes/webhooks.js';

export const READ_ROUTES: readonly ReadRoute[] = [
  ...catalogReadRoutes,
  ...jobsReadRoutes,
  ...commerceReadRoutes,
  ...eventsReadRoutes,
  ...webhookReadRoutes,
  ...ledgerReadRoutes,
  ...insightsReadRoutes,
];
