import type { JobRecord } from '../../core/index.js';
import type { DriverListParams } from '../job-page.js';
import {
  type DriverEdges,
  type DriverEdgesParams,
  type DriverGroup,
  type DriverGroupListParams,
  type DriverHistoryScanParams,
  type DriverHistoryParams,
  type DriverHolders,
  type DriverHoldersParams,
  type DriverLimitListParams,
  type DriverObserverListParams,
  type DriverObserverStatus,
  type DriverOldestDue,
  type DriverOldestDueParams,
  type DriverQueueListParams,
  type DriverThroughput,
  type DriverThroughputParams,
  throughputWindow,
} from '../operator-reads.js';
import { toJob } from '../job-row.js';
import type { DriverAuditListParams } from '../checked/store-driver.js';
import type {
  BatchSummary,
  BlockedSequence,
  AuditRecord,
  ConcurrencyLimit,
  RateLimit,
  RateLimitStatus,
  HistoryEntry,
  JobPage,
  JobCountTotals,
  StoreHealth,
  JobStats,
  JobStatus,
  NodeRecord,
  QueueSummary,
  WakeSubscription,
} from '../job-store.types.js';
import { ANY_QUEUE, FINISH_HINT } from '../wake-hints.js';
import { PostgresDriverWorker } from './postgres-driver-worker.js';
import { foldBeforeRead } from './queries/fold-job-counts.query.js';
import { ORDERED_READ_SETTINGS } from './queries/ordered-read.sql.js';

/** PostgresDriver's operator reads: jobs, queues, limits, audit, observers and nodes, as the dashboard and the CLI show them. */
export class PostgresDriverReads extends PostgresDriverWorker {
  async jobGet({ jobId }: { readonly jobId: string }): Promise<JobRecord | null> {
    const row = await this.sql.get(this.db, jobId);
    return row ? toJob(row) : null;
  }

  async jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.sql.statusMany(this.db, jobIds);
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    const page = await this.connections.transaction((db) => this.sql.list(db, params));
    return page && { jobs: page.rows.map(toJob), next: page.next };
  }

  async jobListDeadLettered({ limit }: { readonly limit: number }): Promise<JobRecord[]> {
    return (await this.sql.deadLettered(this.db, limit)).map(toJob);
  }

  async jobListBlockedSequences({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<BlockedSequence[]> {
    return this.sql.blockedSequences(this.db, limit, after);
  }

  async jobListGroups(params: DriverGroupListParams): Promise<DriverGroup[]> {
    return this.sql.groups(this.db, params);
  }

  async historyScan(params: DriverHistoryScanParams): Promise<HistoryEntry[]> {
    return this.sql.historyScan(this.db, params);
  }

  async jobBatch({ batchId, failedLimit }: { readonly batchId: string; readonly failedLimit: number }): Promise<BatchSummary | null> {
    return this.sql.batch(this.db, batchId, failedLimit);
  }

  async jobBatchIds({ limit, before }: { readonly limit: number; readonly before: string | null }): Promise<string[]> {
    return this.sql.batchIds(this.db, limit, before);
  }

  async jobBatchOpen({ batchId, limit }: { readonly batchId: string; readonly limit: number }): Promise<string[]> {
    return this.sql.batchOpen(this.db, batchId, limit);
  }

  async jobEdges({ id, limit }: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.sql.jobEdges(this.db, id, limit);
  }

  async limitHolders({ key, limit }: DriverHoldersParams): Promise<DriverHolders> {
    return this.sql.limitHolders(this.db, key, limit);
  }

  async queueOldestDue({ queues, scan }: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      return this.sql.queueOldestDue(db, queues, scan);
    });
  }

  /** The clock and the counts in one transaction, so the window is cut at the `now()` the counts see. */
  async jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): Promise<DriverThroughput> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      const now = await this.sql.throughput.now(db);
      const { from } = throughputWindow(since, bucketMs, now);
      return { ...(await this.sql.throughput.counts(db, from, bucketMs, scan, queue)), now };
    });
  }

  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    return this.sql.history(this.db, params);
  }

  async jobStats(): Promise<JobStats> {
    await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.jobStats(this.db);
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    // Only the whole listing folds first: a page must cost its size, and the fold reads every count.
    if (params.kind === 'all') await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.listQueues(this.db, params);
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.jobCountTotals(this.db);
  }

  async storeHealth(): Promise<StoreHealth> {
    return this.sql.storeHealth(this.db);
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.sql.listLimits(this.db, params);
  }

  async subscribeFinishHints(listener: () => void): Promise<WakeSubscription> {
    // On the wake-up hints' connection: a reconnect (ANY_QUEUE) may have dropped finish hints too.
    let open = true;
    const subscription = await this.subscribeWakeHints((payload) => {
      if (payload === FINISH_HINT || payload === ANY_QUEUE) listener();
    });
    // A job that finished before LISTEN took effect sent its hint to nobody: one hint once it has,
    // so the waiter reads after that point and misses nothing in between.
    let cancel = () => {};
    if (this.wakeListener.pid !== undefined) queueMicrotask(() => open && listener());
    else cancel = this.wakeListener.onNextConnection(() => open && listener());
    return {
      get connection() {
        return subscription.connection;
      },
      close: async () => {
        open = false;
        // A subscription closed before the connection came leaves nothing behind waiting for it.
        cancel();
        await subscription.close();
      },
    };
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.sql.rateLimits.list(this.db, params);
  }

  async rateLimitStatus({ key }: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.sql.rateLimits.status(this.db, key);
  }

  async auditList({ limit, action, before }: DriverAuditListParams): Promise<AuditRecord[]> {
    return this.sql.listAudit(this.db, limit, action, before);
  }

  async observerList({ limit, lagScan }: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      return this.sql.listObservers(db, limit, lagScan);
    });
  }

  async nodeList({ seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return this.sql.listNodes(this.db, seenSince, limit);
  }
}
