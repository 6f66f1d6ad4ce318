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
import { ANY_QUEUE } from '../wake-hints.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteDriverReads } from './sqlite-driver-reads.js';
import { runSqliteScheduleTx } from './sqlite-schedule-tx.js';

/**
 * The SQLite store's {@link StoreDriver}. Every write is one IMMEDIATE transaction through the
 * DataSource's gate (see {@link SqliteConnection}), every read waits for the gate too, and hints
 * go to listeners in this process only.
 *
 * Built in layers, one file per role: `sqlite-driver-base.ts` (the connection, hints, migrate),
 * `sqlite-driver-worker.ts` (the hot path), `sqlite-driver-reads.ts` (operator reads), and here
 * the operator's writes, schedules, observers and the sweep's steps.
 */
export class SqliteDriver extends SqliteDriverReads implements StoreDriver {
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
    return runSqliteScheduleTx(this.conn, this.hints, this.operator, work);
  }

  async jobExpireLeases({ limit }: { readonly limit: number }): Promise<ExpiredLease[]> {
    return this.conn.write((now) => {
      const expired = this.conn.statements().expire(limit, now);
      this.hints.ifReleasing(expired.map((e) => e.jobId));
      return expired;
    });
  }

  async jobSettleDependencies({ limit }: { readonly limit: number }): Promise<number> {
    const settled = await this.conn.write((now) => this.conn.statements().settle(limit, now));
    if (settled > 0) this.hints.emit(ANY_QUEUE);
    return settled;
  }

  async scheduleGet({ scheduleId }: { readonly scheduleId: string }): Promise<Schedule | null> {
    const row = await this.conn.read(() => this.conn.statements().getSchedule(scheduleId));
    return row ? toSchedule(row) : null;
  }

  async scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return (await this.conn.read(() => this.conn.statements().listSchedulesPage(limit, after)))?.map(toSchedule) ?? null;
  }

  async historyRead({ after, limit }: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return this.conn.read(() => this.conn.statements().historyRead(Number(after), limit));
  }

  async historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return this.conn.write((now) => this.conn.statements().historyTrim(keep, limit, now));
  }

  async auditAppend(entry: AuditEntry): Promise<void> {
    await this.conn.write((now) => this.conn.statements().insertAudit(entry, now));
  }

  async maintenanceLease({ task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return this.conn.write((now) => this.conn.statements().maintenanceLease(task, workerId, leaseMs, now));
  }

  async jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.conn.write((now) => this.conn.statements().purge(olderThanMs, limit, now));
  }

  /** The counting triggers keep each count directly (one writer at a time): nothing is pending. */
  async jobCountsFold(): Promise<number> {
    return 0;
  }

  async observerLease(params: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return this.conn.write((now) => this.conn.statements().observerLease(params, now));
  }

  async observerCommit({ observer, workerId, position }: DriverObserverCommitParams): Promise<boolean> {
    return this.conn.write((now) => this.conn.statements().observerCommit(observer, workerId, Number(position), now));
  }

  async observerFail(params: DriverObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = params;
    return this.conn.write((now) => this.conn.statements().observerFail(observer, workerId, error, retryDelayMs, now));
  }

  async nodePrune({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.conn.write((now) => this.conn.statements().pruneNodes(olderThanMs, limit, now));
  }
}
