/** The read-model projectors the live runner applies (a module of its own: the projection thread loads only this). */
import type { Projector } from '../../projections/projector.js';
import { partnersProjector } from '../../projections/projectors/partners.js';
import { storesProjector } from '../../projections/projectors/stores.js';
import { productsProjector } from '../../projections/projectors/products.js';
import { jobsProjector } from '../../projections/projectors/jobs.js';
import { clicksProjector } from '../../projections/projectors/clicks.js';
import { ordersProjector } from '../../projections/projectors/orders.js';
import { reportProjector } from '../../projections/projectors/report.js';
import { offersProjector } from '../../projections/projectors/offers.js';
import { ledgerProjector } from '../../projections/projectors/ledger.js';

export const PROJECTORS: Projector[] = [
  partnersProjector,
  storesProjector,
  productsProjector,
  jobsProjector,
  clicksProjector,
  ordersProjector,
  reportProjector,
  offersProjector,
  ledgerProjector,
];
