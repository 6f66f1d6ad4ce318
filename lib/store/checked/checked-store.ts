import type { JobStore } from '../job-store.types.js';
import type { StoreDriver } from './store-driver.js';
import { CheckedMaintenance } from './checked-maintenance.js';

/**
 * The contract, implemented once over a {@link StoreDriver}: every method checks its params, fills
 * in the defaults, composes the audit entry, and then calls the driver, which only talks to its
 * database. Bad input is refused here, before the driver sees it, so every adapter refuses it with
 * the same error. Adapters extend this class with a constructor that builds their driver.
 *
 * The methods live by role, one layer each: `checked-base.ts` (the driver and the store's info),
 * `checked-worker.ts` (worker and producer), `checked-operator.ts`, `checked-schedules.ts` and
 * `checked-maintenance.ts` (observers and the sweep).
 */
export class CheckedStore extends CheckedMaintenance implements JobStore {}
