import type { DriverJobCancelParams, DriverJobWriteParams, DriverLimitSetParams,
  DriverRateLimitSetParams, DriverQueuePausedParams } from '../checked/store-driver.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { SqliteConnection } from './sqlite-connection.js';
import type { SqliteHints } from './sqlite-hints.js';

/**
 * The operator's writes on SQLite, each one IMMEDIATE transaction with the audit entry
 * CheckedStore composed: a `decide` that throws rolls the event and the entry back together.
 */
export class SqliteOperator {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly hints: SqliteHints,
  ) {}

  async replay<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    const { result, queue } = await this.conn.write((now) => {
      const transition = this.replayJob(jobId, now);
      const decided = write.decide(transition);
      this.conn.statements().insertAudit(write.audit(decided), now);
      return { result: decided, queue: transition.after.queue };
    });
    this.hints.emit(queue);
    return result;
  }

  async cancel<R>({ jobId, write, onlyFrom }: DriverJobCancelParams<R>): Promise<R> {
    return this.conn.write((now) => {
      this.hints.ifReleasing([jobId]);
      const result = write.decide(this.conn.statements().operator(jobId, { kind: 'cancel', onlyFrom }, now));
      this.conn.statements().insertAudit(write.audit(result), now);
      return result;
    });
  }

  async runNow<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    const { result, queue } = await this.conn.write((now) => {
      const transition = this.conn.statements().operator(jobId, { kind: 'run_now' }, now);
      const decided = write.decide(transition);
      this.conn.statements().insertAudit(write.audit(decided), now);
      return { result: decided, queue: transition.after.queue };
    });
    this.hints.emit(queue);
    return result;
  }

  async setPaused({ queue, paused, audit }: DriverQueuePausedParams): Promise<void> {
    await this.conn.write((now) => {
      this.conn.statements().setPaused(queue, paused, now);
      this.conn.statements().insertAudit(audit, now);
    });
  }

  /** A limit left as it was is no change, and no audit entry. */
  async setLimit({ key, max, audit }: DriverLimitSetParams): Promise<void> {
    await this.conn.write((now) => {
      if (this.conn.statements().setLimit(key, max, now)) this.conn.statements().insertAudit(audit, now);
    });
  }

  async setRateLimit({ key, rate, audit }: DriverRateLimitSetParams): Promise<void> {
    await this.conn.write((now) => {
      if (this.conn.statements().setRateLimit.set(key, rate, now)) this.conn.statements().insertAudit(audit, now);
    });
  }

  /** Replays a job inside the current write; a schedule it stopped mints again. */
  replayJob(jobId: string, now: number): OperatorTransition {
    const sql = this.conn.statements();
    const job = sql.get(jobId);
    sql.uniqueReplayGuard(job);
    sql.sequenceReplayGuard(job);
    const outcome = sql.operator(jobId, { kind: 'replay' }, now);
    if (outcome.result.ok && outcome.after.scheduleId !== null) sql.reactivateSchedule(outcome.after.scheduleId, jobId, now);
    return outcome;
  }
}
