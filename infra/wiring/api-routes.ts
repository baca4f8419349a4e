/**
 * The contract's route table: every route of both doors, as each door declares it beside its handler. The front of
 * either door matches and authorizes by it (a door answers 405 with `Allow` for a path only the other serves), and
 * the published OpenAPI document has one operation for each.
 */
import { WRITE_ROUTES } from '../../command-api/write-routes.js';
import { READ_ROUTES } from '../../query-api/read-routes.js';
import type { RouteSpec } from '../../shared-schema/http/routes.js';

export const API_ROUTES: readonly RouteSpec[] = [...READ_ROUTES, ...WRITE_ROUTES];
