import type {
  DriverJobCancelParams,
  DriverJobWriteParams,
  DriverLimitSetParams,
  DriverRateLimitSetParams,
  DriverObserverCommitParams,
  DriverObserverFailParams,
  DriverObserverLeaseParams,
  DriverQueuePausedParams,
  StoreDriver,
} from '../checked/store-driver.js';
import type { ExpiredLease, HistoryEntry, HistoryTrimResult, ObserverLease } from '../job-store.types.js';
import { toSchedule, type AuditEntry, type Schedule, type ScheduleTx } from '../schedules/index.js';
import { PostgresDriverReads } from './postgres-driver-reads.js';
import { postgresScheduleTx } from './postgres-schedule-tx.js';

/**
 * The PostgreSQL {@link StoreDriver}: every instant from the database's `now()`, claims with
 * `FOR NO KEY UPDATE SKIP LOCKED`, and each hot-path operation one statement whatever the batch
 * size. Wake hints are NOTIFYs the statements send themselves, so they reach listeners on commit.
 *
 * Built in layers, one file per role: `postgres-driver-base.ts` (connections, statements, migrate),
 * `postgres-driver-worker.ts` (the hot path), `postgres-driver-reads.ts` (operator reads), and
 * here the operator's writes, schedules, observers and the sweep's steps.
 */
export class PostgresDriver extends PostgresDriverReads implements StoreDriver {
  jobReplay<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.replay(params);
  }

  jobCancel<R>(params: DriverJobCancelParams<R>): Promise<R> {
    return this.operator.cancel(params);
  }

  jobRunNow<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.runNow(params);
  }

  queueSetPaused(params: DriverQueuePausedParams): Promise<void> {
    return this.operator.setPaused(params);
  }

  concurrencyLimitSet(params: DriverLimitSetParams): Promise<void> {
    return this.operator.setLimit(params);
  }

  rateLimitSet(params: DriverRateLimitSetParams): Promise<void> {
    return this.operator.setRateLimit(params);
  }

  scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    return this.connections.transaction(async (db) =>
      work(
        await postgresScheduleTx(db, this.sql, {
          insertJobs: (executor, jobs) => this.insertJobs(executor, jobs),
          replayJob: (executor, jobId) => this.operator.replayJob(executor, jobId),
        }),
      ),
    );
  }

  async jobExpireLeases({ limit }: { readonly limit: number }): Promise<ExpiredLease[]> {
    return this.sql.expire(this.db, limit);
  }

  async jobSettleDependencies({ limit }: { readonly limit: number }): Promise<number> {
    return this.sql.settle(this.db, limit);
  }

  async scheduleGet({ scheduleId }: { readonly scheduleId: string }): Promise<Schedule | null> {
    const row = await this.sql.getSchedule(this.db, scheduleId);
    return row ? toSchedule(row) : null;
  }

  async scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return (await this.sql.listSchedulesPage(this.db, limit, after))?.map(toSchedule) ?? null;
  }

  async historyRead({ after, limit }: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return this.sql.historyRead(this.db, after, limit);
  }

  async historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return this.sql.historyTrim(this.db, keep, limit);
  }

  async auditAppend(entry: AuditEntry): Promise<void> {
    await this.sql.insertAudit(this.db, entry);
  }

  async maintenanceLease({ task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return this.sql.maintenanceLease(this.db, task, workerId, leaseMs);
  }

  async jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.sql.purge(this.db, olderThanMs, limit);
  }

  async jobCountsFold({ limit }: { readonly limit: number }): Promise<number> {
    return this.sql.foldCounts(this.db, limit);
  }

  async observerLease(params: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return this.sql.observerLease(this.db, params);
  }

  async observerCommit({ observer, workerId, position }: DriverObserverCommitParams): Promise<boolean> {
    return this.sql.observerCommit(this.db, observer, workerId, position);
  }

  async observerFail(params: DriverObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = params;
    return this.sql.observerFail(this.db, observer, workerId, error, retryDelayMs);
  }

  async nodePrune({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.sql.pruneNodes(this.db, olderThanMs, limit);
  }
}
