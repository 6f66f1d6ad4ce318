import { assertDelayMs, assertPositiveInteger } from '../../core/index.js';
import { checkHistoryRead, checkObserverCommit, checkObserverFail, checkObserverLease } from './effect-params.js';
import type {
  ExpiredLease,
  ExpireLeasesParams,
  HistoryEntry,
  HistoryReadParams,
  HistoryTrimParams,
  HistoryTrimResult,
  JobCountsFoldParams,
  MaintenanceLeaseParams,
  MaintenanceStore,
  NodePruneParams,
  ObserverCommitParams,
  ObserverFailParams,
  ObserverLease,
  ObserverLeaseParams,
  ObserverStore,
  PurgeParams,
  SettleDependenciesParams,
} from '../job-store.types.js';
import { CheckedSchedules } from './checked-schedules.js';
import { checkNodePruneParams } from './node-params.js';
import { checkExpireParams, checkMaintenanceLeaseParams, MAX_BATCH, paramsOf } from './store-params.js';

/** The most rows one retention pass (purge or history trim) may delete. */
const MAX_CLEANUP_BATCH = 100_000;

/** `CheckedStore`'s background passes: the observers' reads of the history log, and the sweep's steps. */
export class CheckedMaintenance extends CheckedSchedules implements ObserverStore, MaintenanceStore {
  migrate(): Promise<void> {
    return this.driver.migrate();
  }

  schemaVersion(): Promise<number | null> {
    return this.driver.schemaVersion();
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  async jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]> {
    return this.driver.jobExpireLeases({ limit: checkExpireParams(params) });
  }

  async jobSettleDependencies(params: SettleDependenciesParams): Promise<number> {
    const { limit } = paramsOf('jobSettleDependencies', params, '{ limit }');
    return this.driver.jobSettleDependencies({ limit: assertPositiveInteger(limit, 'limit', MAX_BATCH) });
  }

  async historyRead(params: HistoryReadParams): Promise<HistoryEntry[]> {
    const { shape, start } = this.driver.positions;
    return this.driver.historyRead(checkHistoryRead(params, shape, start));
  }

  async maintenanceLease(params: MaintenanceLeaseParams): Promise<boolean> {
    return this.driver.maintenanceLease(checkMaintenanceLeaseParams(params));
  }

  async historyTrim(params: HistoryTrimParams): Promise<HistoryTrimResult> {
    const checked = paramsOf('historyTrim', params, '{ keep, limit }');
    const keep = assertPositiveInteger(checked.keep, 'keep');
    return this.driver.historyTrim({ keep, limit: assertPositiveInteger(checked.limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async jobPurge(params: PurgeParams): Promise<number> {
    const checked = paramsOf('jobPurge', params, '{ olderThanMs, limit }');
    const olderThanMs = assertDelayMs(checked.olderThanMs, 'olderThanMs');
    return this.driver.jobPurge({ olderThanMs, limit: assertPositiveInteger(checked.limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async jobCountsFold(params: JobCountsFoldParams): Promise<number> {
    const { limit } = paramsOf('jobCountsFold', params, '{ limit }');
    return this.driver.jobCountsFold({ limit: assertPositiveInteger(limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null> {
    return this.driver.observerLease(checkObserverLease(params, this.limits.maxNameLength));
  }

  async observerCommit(params: ObserverCommitParams): Promise<boolean> {
    return this.driver.observerCommit(checkObserverCommit(params, this.driver.positions.shape));
  }

  async observerFail(params: ObserverFailParams): Promise<boolean> {
    return this.driver.observerFail(checkObserverFail(params, this.limits.maxErrorBytes));
  }

  async nodePrune(params: NodePruneParams): Promise<number> {
    return this.driver.nodePrune(checkNodePruneParams(params));
  }
}
