import type { FinishMode, HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import type { StoreInfo } from '../job-store.types.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { StoreDriver } from './store-driver.js';

/**
 * The first layer of `CheckedStore`: the driver every layer calls, and what every role reads
 * about the store. CheckedStore is one class built in layers, one file per role of the contract,
 * so each stays small; a layer adds methods and no state.
 */
export class CheckedBase implements StoreInfo {
  constructor(protected readonly driver: StoreDriver) {}

  get capabilities(): StoreCapabilities {
    return this.driver.capabilities;
  }

  get limits(): SchedulerLimits {
    return this.driver.limits;
  }

  get historyPolicy(): HistoryPolicy {
    return this.driver.historyPolicy;
  }

  get finish(): FinishMode {
    return this.driver.finish;
  }
}
