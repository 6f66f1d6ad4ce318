import type {
  DriverJobCancelParams,
  DriverJobWriteParams,
  DriverLimitSetParams,
  DriverNodeBeatParams,
  DriverObserverCommitParams,
  DriverObserverFailParams,
  DriverObserverLeaseParams,
  DriverQueuePausedParams,
  DriverRateLimitSetParams,
  StoreDriver,
} from '../checked/store-driver.js';
import type { DriverObserverListParams, DriverObserverStatus } from '../operator-reads.js';
import type { HistoryEntry, HistoryTrimResult, NodeRecord, ObserverLease } from '../job-store.types.js';
import type { ScheduleTx } from '../schedules/index.js';
import type { AuditEntry } from '../schedules/schedule-tx.js';
import type { MysqlDriverSettings } from './mysql-driver-base.js';
import { MysqlDriverWorker } from './mysql-driver-worker.js';
import { EffectWriter } from './mysql-effects.js';
import type { MysqlExecutor } from './mysql-executor.js';
import { setConcurrencyLimit, setRateLimit } from './mysql-limits.js';
import * as maintenance from './mysql-maintenance.js';
import * as nodes from './mysql-nodes.js';
import * as observers from './mysql-observers.js';
import { MysqlOperator } from './mysql-operator.js';
import { mysqlScheduleTx } from './mysql-schedule-tx.js';
import { insertAuditStatement } from './queries/insert-audit.query.js';

/**
 * The MySQL store's {@link StoreDriver}: every write one transaction of the store's own (or the
 * caller's), its effects applied by the adapter inside it (mysql-effects.ts), and hints to this
 * process's listeners only.
 *
 * Built in layers, one file per role: `mysql-driver-base.ts` (sessions, hints, migrate),
 * `mysql-driver-reads.ts` (operator reads), `mysql-driver-worker.ts` (the hot path), and here the
 * operator's writes, schedules, observers, the node registry and the sweep's steps.
 */
export class MysqlDriver extends MysqlDriverWorker implements StoreDriver {
  private readonly operator: MysqlOperator;

  constructor(settings: MysqlDriverSettings) {
    super(settings);
    this.operator = new MysqlOperator(this.conns, this.naming, this.historyPolicy, this.hints);
  }

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

  async concurrencyLimitSet({ key, max, audit }: DriverLimitSetParams): Promise<void> {
    await this.limitWrite(audit, (db) => setConcurrencyLimit(db, this.naming, key, max));
  }

  async rateLimitSet({ key, rate, audit }: DriverRateLimitSetParams): Promise<void> {
    await this.limitWrite(audit, (db) => setRateLimit(db, this.naming, key, rate));
    // A raised or removed rate may free starts that held-back jobs wait for.
    this.hints.emit('*');
  }

  async scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    const { result, due, woken } = await this.conns.transaction(async (tx) => {
      const effects = new EffectWriter(this.naming, this.historyPolicy, await this.now(tx));
      const due = new Set<string>();
      const result = await work(mysqlScheduleTx(tx, this.naming, effects, this.operator, due));
      await effects.settle(tx);
      await tx.commitWith(effects.take());
      return { result, due, woken: effects.woken };
    });
    for (const queue of new Set([...due, ...woken])) this.hints.emit(queue);
    return result;
  }

  historyRead(params: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return maintenance.historyRead(this.conns, this.naming, params);
  }

  historyTrim(params: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return maintenance.historyTrim(this.conns, this.naming, params);
  }

  maintenanceLease(params: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return maintenance.maintenanceLease(this.conns, this.naming, params);
  }

  jobPurge(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return maintenance.jobPurge(this.conns, this.naming, params);
  }

  jobCountsFold(params: { readonly limit: number }): Promise<number> {
    return maintenance.jobCountsFold(this.conns, this.naming, params);
  }

  observerLease(params: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return observers.observerLease(this.conns, this.naming, params);
  }

  observerCommit(params: DriverObserverCommitParams): Promise<boolean> {
    return observers.observerCommit(this.conns, this.naming, params);
  }

  observerFail(params: DriverObserverFailParams): Promise<boolean> {
    return observers.observerFail(this.conns, this.naming, params);
  }

  observerList(params: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return observers.observerList(this.conns, this.naming, params);
  }

  nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    return nodes.nodeBeat(this.conns, this.naming, params, this.finish);
  }

  nodeStop(params: { readonly id: string }): Promise<void> {
    return nodes.nodeStop(this.conns, this.naming, params);
  }

  nodeList(params: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return nodes.nodeList(this.conns, this.naming, params);
  }

  nodePrune(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return nodes.nodePrune(this.conns, this.naming, params);
  }

  async auditAppend(entry: AuditEntry): Promise<void> {
    await this.conns.transaction(async (tx) => tx.commitWith([insertAuditStatement(this.naming, entry, await this.now(tx))]));
  }

  /** A limit change under the limits lock, audited in its transaction when it changed anything. */
  private async limitWrite(audit: AuditEntry, change: (db: MysqlExecutor) => Promise<boolean>): Promise<void> {
    await this.conns.transaction(async (tx) => {
      const changed = await change(tx);
      if (changed) await tx.commitWith([insertAuditStatement(this.naming, audit, await this.now(tx))]);
    });
  }
}
