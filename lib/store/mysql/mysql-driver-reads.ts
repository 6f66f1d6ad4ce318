import type { JobRecord } from '../../core/index.js';
import type { DriverAuditListParams, DriverParentOutputParams } from '../checked/store-driver.js';
import type { DriverListParams } from '../job-page.js';
import { toJob } from '../job-row.js';
import type {
  AuditRecord,
  BatchSummary,
  BlockedSequence,
  ConcurrencyLimit,
  HistoryEntry,
  JobCountTotals,
  JobPage,
  JobStats,
  JobStatus,
  ParentOutput,
  QueueSummary,
  RateLimit,
  RateLimitStatus,
  WakeSubscription,
} from '../job-store.types.js';
import {
  throughputWindow,
  type DriverEdges,
  type DriverEdgesParams,
  type DriverGroup,
  type DriverGroupListParams,
  type DriverHistoryScanParams,
  type DriverHistoryParams,
  type DriverHolders,
  type DriverHoldersParams,
  type DriverLimitListParams,
  type DriverOldestDue,
  type DriverOldestDueParams,
  type DriverQueueListParams,
  type DriverThroughput,
  type DriverThroughputParams,
} from '../operator-reads.js';
import { toSchedule, type Schedule } from '../schedules/index.js';
import { MysqlDriverBase } from './mysql-driver-base.js';
import { sequenceHistory } from './mysql-history-sequencer.js';
import { batchIds } from './queries/batch-ids.query.js';
import { batchOpen } from './queries/batch-open.query.js';
import { readBatchSummary } from './queries/batch-summary.query.js';
import { blockedSequences } from './queries/blocked-sequences.query.js';
import { listGroups } from './queries/list-groups.query.js';
import { historyScan } from './queries/history-scan.query.js';
import { getJob } from './queries/get-job.query.js';
import { getSchedule } from './queries/get-schedule.query.js';
import { jobCountTotals } from './queries/job-count-totals.query.js';
import { jobEdges } from './queries/job-edges.query.js';
import { jobHistoryEntries, jobHistoryRows } from './queries/job-history.query.js';
import { jobStats } from './queries/job-stats.query.js';
import { jobStatusMany } from './queries/job-status-many.query.js';
import { jobThroughput } from './queries/job-throughput.query.js';
import { limitHolders } from './queries/limit-holders.query.js';
import { listAudit } from './queries/list-audit.query.js';
import { listDeadLettered } from './queries/list-dead-lettered.query.js';
import { listJobs } from './queries/list-jobs.query.js';
import { listLimits } from './queries/list-limits.query.js';
import { listQueues } from './queries/list-queues.query.js';
import { listSchedulesPage } from './queries/list-schedules-page.query.js';
import { parentOutput } from './queries/parent-output.query.js';
import { queueOldestDue } from './queries/queue-oldest-due.query.js';
import { listRateLimits, rateLimitStatus } from './queries/rate-limit-reads.query.js';

/**
 * MysqlDriver's reads: jobs, queues, limits, history, audit and schedules, as the dashboard, the
 * CLI and a dependant's handler see them. Each runs on one of the store's sessions outside any
 * transaction (READ COMMITTED: each statement sees what had committed when it began), mostly as
 * one statement or one script; the query files say where a read takes more. The counts are the
 * folded ones plus the changes since (job-counts.sql.ts), so a count read is exact without folding
 * first, and stays a read.
 */
export class MysqlDriverReads extends MysqlDriverBase {
  async jobGet({ jobId }: { readonly jobId: string }): Promise<JobRecord | null> {
    const row = await this.conns.session((db) => getJob(db, this.naming, jobId));
    return row ? toJob(row) : null;
  }

  async jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.conns.session((db) => jobStatusMany(db, this.naming, jobIds));
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    const page = await this.conns.session((db) => listJobs(db, this.naming, params));
    return page && { jobs: page.rows.map(toJob), next: page.next };
  }

  async jobListDeadLettered({ limit }: { readonly limit: number }): Promise<JobRecord[]> {
    return (await this.conns.session((db) => listDeadLettered(db, this.naming, limit))).map(toJob);
  }

  async jobListBlockedSequences({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<BlockedSequence[]> {
    return this.conns.session((db) => blockedSequences(db, this.naming, limit, after));
  }

  async historyScan(params: DriverHistoryScanParams): Promise<HistoryEntry[]> {
    return this.conns.session((db) => historyScan(db, this.naming, params));
  }

  async jobListGroups(params: DriverGroupListParams): Promise<DriverGroup[]> {
    return this.conns.transaction((tx) => listGroups(tx, this.naming, params));
  }

  async jobBatch({ batchId, failedLimit }: { readonly batchId: string; readonly failedLimit: number }): Promise<BatchSummary | null> {
    return this.conns.session((db) => readBatchSummary(db, this.naming, batchId, failedLimit));
  }

  async jobBatchIds({ limit, before }: { readonly limit: number; readonly before: string | null }): Promise<string[]> {
    return this.conns.session((db) => batchIds(db, this.naming, limit, before));
  }

  async jobBatchOpen({ batchId, limit }: { readonly batchId: string; readonly limit: number }): Promise<string[]> {
    return this.conns.session((db) => batchOpen(db, this.naming, batchId, limit));
  }

  async jobEdges({ id, limit }: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.conns.session((db) => jobEdges(db, this.naming, id, limit));
  }

  async limitHolders({ key, limit }: DriverHoldersParams): Promise<DriverHolders> {
    return this.conns.session((db) => limitHolders(db, this.naming, key, limit));
  }

  async queueOldestDue({ queues, scan }: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.conns.session((db) => queueOldestDue(db, this.naming, queues, scan));
  }

  /**
   * The clock, then the counts, on one session: the window is cut at the `now` read first, and a
   * job that finishes between the two lands past the window's last bucket, where
   * throughputResult leaves it out.
   */
  async jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): Promise<DriverThroughput> {
    return this.conns.session(async (db) => {
      const now = await this.now(db);
      const { from } = throughputWindow(since, bucketMs, now);
      return { ...(await jobThroughput(db, this.naming, from, bucketMs, scan, queue)), now };
    });
  }

  /**
   * An entry's position is given after its commit, by the history sequencer; one this read finds
   * without a position is numbered first (a pass numbers every entry committed by then), and the
   * history read again, so the positions it hands out are ones historyRead and observerCommit take.
   */
  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    let rows = await this.conns.session((db) => jobHistoryRows(db, this.naming, params));
    while (rows.some((row) => row.pos === null) && (await sequenceHistory(this.conns, this.naming)) > 0) {
      rows = await this.conns.session((db) => jobHistoryRows(db, this.naming, params));
    }
    return jobHistoryEntries(rows);
  }

  async jobStats(): Promise<JobStats> {
    return this.conns.session((db) => jobStats(db, this.naming));
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    return this.conns.session((db) => listQueues(db, this.naming, params));
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    return this.conns.session((db) => jobCountTotals(db, this.naming));
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.conns.session((db) => listLimits(db, this.naming, params));
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.conns.session((db) => listRateLimits(db, this.naming, params));
  }

  async rateLimitStatus({ key }: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.conns.session((db) => rateLimitStatus(db, this.naming, key));
  }

  /**
   * MySQL has no way to signal another process: this process's node reports the jobs it finishes,
   * and a waiter sees other processes' outcomes at its next poll.
   */
  async subscribeFinishHints(): Promise<WakeSubscription> {
    return { close: async () => {} };
  }

  async auditList({ limit, action, before }: DriverAuditListParams): Promise<AuditRecord[]> {
    return this.conns.session((db) => listAudit(db, this.naming, limit, action, before));
  }

  async jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): Promise<ParentOutput> {
    return this.conns.session((db) => parentOutput(db, this.naming, jobId, ancestorId));
  }

  async scheduleGet({ scheduleId }: { readonly scheduleId: string }): Promise<Schedule | null> {
    const row = await this.conns.session((db) => getSchedule(db, this.naming, scheduleId));
    return row ? toSchedule(row) : null;
  }

  async scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return (await this.conns.session((db) => listSchedulesPage(db, this.naming, limit, after)))?.map(toSchedule) ?? null;
  }
}
