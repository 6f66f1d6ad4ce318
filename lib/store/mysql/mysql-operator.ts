import { isDeadLetterState, JobNotFoundError, LIFECYCLE_RULES, type JobEvent, type JobState } from '../../core/index.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { DriverJobCancelParams, DriverJobWriteParams, DriverQueuePausedParams, OperatorWrite } from '../checked/store-driver.js';
import { debounceKeyTakenError, uniqueKeyTakenError, uniqueSlot, windowSlot } from '../unique/unique-plan.js';
import { sequenceWentOnError } from '../dependencies/sequence-chain.js';
import type { WakeHub } from '../wake-hints.js';
import type { MysqlConnections } from './mysql-connections.js';
import { EffectWriter } from './mysql-effects.js';
import type { MysqlExecutor } from './mysql-executor.js';
import { lockNames } from './mysql-locks.js';
import type { MysqlNaming } from './mysql-naming.js';
import { instantParam } from './mysql-row.js';
import { fromMysqlInstant } from './mysql-instant.js';
import { insertAuditStatement } from './queries/insert-audit.query.js';
import { lockJobs } from './queries/lock-jobs.query.js';
import type { HistoryPolicy } from '../../core/index.js';

/**
 * The operator's writes on one job or queue, each in a transaction of the store's own with the
 * audit entry CheckedStore composed: the job is locked, the core lifecycle decides, `decide` may
 * throw to roll the event and the entry back together, and the effects commit with them.
 */
export class MysqlOperator {
  constructor(
    private readonly conns: MysqlConnections,
    private readonly naming: MysqlNaming,
    private readonly policy: HistoryPolicy,
    private readonly hints: WakeHub,
  ) {}

  replay<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    return this.decided(write, (db, effects) => this.replayJob(db, effects, jobId));
  }

  cancel<R>({ jobId, write, onlyFrom }: DriverJobCancelParams<R>): Promise<R> {
    return this.decided(write, (db, effects) => this.event(db, effects, jobId, { kind: 'cancel', onlyFrom }));
  }

  runNow<R>({ jobId, write }: DriverJobWriteParams<R>): Promise<R> {
    return this.decided(write, (db, effects) => this.event(db, effects, jobId, { kind: 'run_now' }));
  }

  async setPaused({ queue, paused, audit }: DriverQueuePausedParams): Promise<void> {
    await this.conns.transaction(async (tx) => {
      const [{ now }] = await tx.query<{ now: string }>('SELECT UTC_TIMESTAMP(3) AS now');
      await tx.commitWith([
        {
          sql: `INSERT INTO ${this.naming.queues} (name, paused, updated_at) VALUES (?, ?, ?)
                ON DUPLICATE KEY UPDATE paused = VALUES(paused), updated_at = VALUES(updated_at)`,
          values: [queue, paused, now],
        },
        insertAuditStatement(this.naming, audit, fromMysqlInstant(now!).getTime()),
      ]);
    });
    if (!paused) this.hints.emit(queue);
  }

  /**
   * Refuses the replay of a failed sequence job that a later job of its key ran past (see
   * sequenceWentOnError), under the key's row lock, as an enqueue of the key takes it; the edge is
   * read locking, so it is the latest committed whatever the transaction's snapshot. `job` is the
   * replay's peek at the row.
   */
  private async guardSequenceReplay(db: MysqlExecutor, jobId: string, job: { state: JobState; sequence_key: string | null }): Promise<void> {
    if (job.sequence_key == null || !isDeadLetterState(job.state)) return;
    const [, passed] = (await db.script([
      { sql: `SELECT \`key\` FROM ${this.naming.sequences} WHERE \`key\` = ? FOR UPDATE`, values: [job.sequence_key] },
      { sql: `SELECT 1 FROM ${this.naming.dependencies} WHERE parent_id = ? AND sequence IS NOT NULL AND settled = TRUE LIMIT 1 LOCK IN SHARE MODE`, values: [jobId] },
    ])) as [unknown, unknown[]];
    if (passed.length > 0) throw sequenceWentOnError({ id: jobId, state: job.state }, String(job.sequence_key));
  }

  /**
   * Replays a job inside `db`'s open transaction: refused while another unfinished job holds its
   * unique key, or another job that has not started takes the enqueues of its debounce key (the
   * key's lock is taken first, as an enqueue of that key takes it), and a schedule it stopped mints
   * again.
   */
  async replayJob(db: MysqlExecutor, effects: EffectWriter, jobId: string): Promise<OperatorTransition> {
    const [peek] = await db.query<{ name: string; state: JobState; unique_key: string | null; window_kind: string | null; window_key: string | null; sequence_key: string | null }>(
      `SELECT name, state, unique_key, window_kind, window_key, sequence_key FROM ${this.naming.jobs} WHERE id = ?`,
      [jobId],
    );
    if (peek?.unique_key != null) await lockNames(db, this.naming, 'unique', [uniqueSlot(peek.name, peek.unique_key)]);
    if (peek?.window_kind === 'debounce') await lockNames(db, this.naming, 'unique', [windowSlot('debounce', peek.name, peek.window_key!)]);
    if (peek) await this.guardSequenceReplay(db, jobId, peek);
    const transition = await this.event(db, effects, jobId, { kind: 'replay' });
    const { before, after, result } = transition;
    if (result.ok && before.uniqueKey !== null) {
      const [holder] = await db.query<{ id: string }>(
        `SELECT id FROM ${this.naming.jobs} WHERE name = ? AND live_unique_key = ? AND id <> ? LIMIT 1`,
        [before.name, before.uniqueKey, before.id],
      );
      if (holder) throw uniqueKeyTakenError(before, before.uniqueKey, holder.id);
    }
    if (result.ok && before.windowKind === 'debounce') {
      // Under the key's lock, so no enqueue of the key can add a holder before this commits.
      const [holder] = await db.query<{ id: string }>(
        `SELECT id FROM ${this.naming.jobs} WHERE name = ? AND pending_debounce_key = ? AND id <> ? LIMIT 1`,
        [before.name, before.windowKey, before.id],
      );
      if (holder) throw debounceKeyTakenError(before, before.windowKey!, holder.id);
    }
    if (result.ok && after.scheduleId !== null) {
      effects.also({
        sql: `UPDATE ${this.naming.schedules} SET state = 'active', halted_job_id = NULL, updated_at = ? WHERE id = ? AND state = 'dead_lettered' AND halted_job_id = ?`,
        values: [instantParam(effects.now), after.scheduleId, jobId],
      });
    }
    return transition;
  }

  /** Applies an operator event to a locked job, staging its effects; the transition says whether it applied. */
  private async event(db: MysqlExecutor, effects: EffectWriter, jobId: string, event: JobEvent): Promise<OperatorTransition> {
    // A cancel can end the job and a replay bring it back: both hold its parent guard (mysql-locks.ts).
    const { jobs } = await lockJobs(db, this.naming, [jobId], { guard: event.kind === 'cancel' || event.kind === 'replay' });
    const job = jobs.get(jobId);
    if (!job) throw new JobNotFoundError(jobId);
    const result = LIFECYCLE_RULES.transition(job.row, event, effects.now);
    const after = result.ok ? { ...job.row, ...result.next } : job.row;
    if (result.ok) effects.change(job, after, result.effects);
    return { before: job.row, after, result };
  }

  private async decided<R>(write: OperatorWrite<R>, transition: (db: MysqlExecutor, effects: EffectWriter) => Promise<OperatorTransition>): Promise<R> {
    const { result, woken } = await this.conns.transaction(async (tx) => {
      const [{ now }] = await tx.query<{ now: string }>('SELECT UTC_TIMESTAMP(3) AS now');
      const effects = new EffectWriter(this.naming, this.policy, fromMysqlInstant(now!).getTime());
      const decided = write.decide(await transition(tx, effects));
      effects.also(insertAuditStatement(this.naming, write.audit(decided), effects.now));
      await effects.settle(tx);
      await tx.commitWith(effects.take());
      return { result: decided, woken: effects.woken };
    });
    for (const queue of woken) this.hints.emit(queue);
    return result;
  }
}
