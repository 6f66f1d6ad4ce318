import type { DriverJobCancelParams, DriverJobWriteParams, DriverLimitSetParams,
  DriverRateLimitSetParams, DriverQueuePausedParams } from '../checked/store-driver.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { PgExecutor } from './pg-executor.js';
import type { PostgresConnections } from './postgres-connections.js';
import type { PostgresStatements } from './postgres-statements.js';
import { guardReplayPostgres } from './postgres-unique-enqueue.js';

/**
 * The operator's writes, each in one transaction with the audit entry CheckedStore composed: a
 * `decide` that throws rolls the event back, and nothing reaches the audit log.
 */
export class PostgresOperatorWrites {
  constructor(
    private readonly sql: PostgresStatements,
    private readonly connections: PostgresConnections,
    /** The wake-hint channel the operator statement notifies on. */
    private readonly channel: string,
  ) {}

  replay<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    return this.connections.transaction(async (db) => {
      const result = write.decide(await this.replayJob(db, jobId));
      await this.sql.insertAudit(db, write.audit(result));
      return result;
    });
  }

  cancel<R>({ jobId, write, onlyFrom }: DriverJobCancelParams<R>): Promise<R> {
    return this.connections.transaction(async (db) => {
      const result = write.decide(await this.sql.operator(db, jobId, { kind: 'cancel', onlyFrom }, this.channel));
      await this.sql.insertAudit(db, write.audit(result));
      return result;
    });
  }

  runNow<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    return this.connections.transaction(async (db) => {
      const result = write.decide(await this.sql.operator(db, jobId, { kind: 'run_now' }, this.channel));
      await this.sql.insertAudit(db, write.audit(result));
      return result;
    });
  }

  async setPaused({ queue, paused, audit }: DriverQueuePausedParams): Promise<void> {
    await this.connections.transaction(async (db) => {
      await this.sql.setPaused(db, queue, paused);
      await this.sql.insertAudit(db, audit);
    });
  }

  /** A limit left as it was is no change, and no audit entry (set-limit.query.ts). */
  async setLimit({ key, max, audit }: DriverLimitSetParams): Promise<void> {
    await this.connections.transaction(async (db) => {
      if (await this.sql.setLimit(db, key, max)) await this.sql.insertAudit(db, audit);
    });
  }

  async setRateLimit({ key, rate, audit }: DriverRateLimitSetParams): Promise<void> {
    await this.connections.transaction(async (db) => {
      if (await this.sql.setRateLimit(db, key, rate)) await this.sql.insertAudit(db, audit);
    });
  }

  /** Replays a job inside `db`'s transaction; a schedule it stopped mints again. */
  async replayJob(db: PgExecutor, jobId: string): Promise<OperatorTransition> {
    await guardReplayPostgres(db, jobId, this.sql.uniqueReplayHolder);
    await this.sql.sequenceReplayGuard(db, jobId);
    const outcome = await this.sql.operator(db, jobId, { kind: 'replay' }, this.channel);
    if (outcome.result.ok && outcome.after.scheduleId !== null) {
      await this.sql.reactivateSchedule(db, outcome.after.scheduleId, jobId);
    }
    return outcome;
  }
}
