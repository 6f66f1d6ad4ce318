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
  JobStats,
  JobStatus,
  NodeRecord,
  QueueSummary,
} from '../job-store.types.js';
import type { WakeSubscription } from '../wake-hints.js';
import { SqliteDriverWorker } from './sqlite-driver-worker.js';

/** SqliteDriver's operator reads: jobs, queues, limits, audit, observers and nodes, as the dashboard and the CLI show them. */
export class SqliteDriverReads extends SqliteDriverWorker {
  async jobGet({ jobId }: { readonly jobId: string }): Promise<JobRecord | null> {
    const row = await this.conn.read(() => this.conn.statements().get(jobId));
    return row ? toJob(row) : null;
  }

  async jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.conn.readStatuses(() => this.conn.statements().statusMany(jobIds));
  }

  callerHoldsConnection(): boolean {
    // Scoped owners only (a dataSource.transaction callback, an attempt): plain host code holding
    // it for TypeORM's own short transactions cannot be told from other plain host code.
    return this.conn.gate.callerHolds() !== null;
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    const page = await this.conn.read(() => this.conn.statements().list(params));
    return page && { jobs: page.rows.map(toJob), next: page.next };
  }

  async jobListBlockedSequences({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<BlockedSequence[]> {
    return this.conn.read(() => this.conn.statements().blockedSequences(limit, after));
  }

  async historyScan(params: DriverHistoryScanParams): Promise<HistoryEntry[]> {
    return this.conn.read(() => this.conn.statements().historyScan(params));
  }

  async jobListGroups(params: DriverGroupListParams): Promise<DriverGroup[]> {
    return this.conn.read(() => this.conn.statements().groups(params, this.conn.now()));
  }

  async jobBatch({ batchId, failedLimit }: { readonly batchId: string; readonly failedLimit: number }): Promise<BatchSummary | null> {
    return this.conn.read(() => this.conn.statements().batchSummary(batchId, failedLimit));
  }

  async jobBatchIds({ limit, before }: { readonly limit: number; readonly before: string | null }): Promise<string[]> {
    return this.conn.read(() => this.conn.statements().batchIds(limit, before));
  }

  async jobBatchOpen({ batchId, limit }: { readonly batchId: string; readonly limit: number }): Promise<string[]> {
    return this.conn.read(() => this.conn.statements().batchOpen(batchId, limit));
  }

  async jobListDeadLettered({ limit }: { readonly limit: number }): Promise<JobRecord[]> {
    return (await this.conn.read(() => this.conn.statements().deadLettered(limit))).map(toJob);
  }

  async jobEdges({ id, limit }: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.conn.read(() => this.conn.statements().jobEdges(id, limit));
  }

  async limitHolders({ key, limit }: DriverHoldersParams): Promise<DriverHolders> {
    return this.conn.read(() => this.conn.statements().limitHolders(key, limit, this.conn.now()));
  }

  async queueOldestDue({ queues, scan }: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.conn.read(() => this.conn.statements().queueOldestDue(queues, scan, this.conn.now()));
  }

  async jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): Promise<DriverThroughput> {
    return this.conn.read(() => {
      const now = this.conn.now();
      const { from } = throughputWindow(since, bucketMs, now);
      return { ...this.conn.statements().throughput(from, bucketMs, scan, queue), now };
    });
  }

  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    return this.conn.read(() => this.conn.statements().history(params));
  }

  async jobStats(): Promise<JobStats> {
    return this.conn.read(() => this.conn.statements().jobStats(this.conn.now()));
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    return this.conn.read(() => this.conn.statements().listQueues(params));
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    return this.conn.read(() => this.conn.statements().jobCountTotals());
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.conn.read(() => this.conn.statements().listLimits(params));
  }

  /**
   * SQLite has no way to signal another process: this process's node reports the jobs it finishes,
   * and a waiter sees other processes' outcomes at its next poll.
   */
  async subscribeFinishHints(): Promise<WakeSubscription> {
    return { close: async () => {} };
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.conn.read(() => this.conn.statements().rateLimits.list(params));
  }

  async rateLimitStatus({ key }: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.conn.read(() => this.conn.statements().rateLimits.status(key, this.conn.now()));
  }

  async auditList({ limit, action, before }: DriverAuditListParams): Promise<AuditRecord[]> {
    return this.conn.read(() => this.conn.statements().listAudit(limit, action, before));
  }

  async observerList({ limit, lagScan }: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return this.conn.read(() => this.conn.statements().listObservers(limit, lagScan, this.conn.now()));
  }

  async nodeList({ seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return this.conn.read(() => this.conn.statements().listNodes(seenSince, limit));
  }
}
