import { ANY_QUEUE } from '../wake-hints.js';
import type { JobRecord, JobState } from '../../core/index.js';
import type {
  DriverCompleteParams,
  DriverEnqueueParams,
  DriverHeartbeatParams,
  DriverNodeBeatParams,
  DriverParentOutputParams,
  DriverRelinquishParams,
  SuccessCheck,
} from '../checked/store-driver.js';
import { assertAcyclic } from '../dependencies/dependency-plan.js';
import type { NewJob } from '../enqueue-input.js';
import { toJob } from '../job-row.js';
import type { AttemptTransaction, CompleteAndClaimResult, EnqueueResult, HeartbeatResult, OutcomeResult, ParentOutput } from '../job-store.types.js';
import { type CheckedClaimParams } from '../checked/store-params.js';
import { hasKeys } from '../unique/unique-plan.js';
import type { PgExecutor } from './pg-executor.js';
import { PostgresAttemptTransaction } from './postgres-attempt-transaction.js';
import { PostgresDriverBase } from './postgres-driver-base.js';
import { enqueueUniquePostgres } from './postgres-unique-enqueue.js';
import { enqueueSequenced } from '../dependencies/sequence-enqueue.js';
import { hasSequences } from '../dependencies/sequence-chain.js';

/** PostgresDriver's hot path: enqueue, claim, heartbeat, outcomes, and the node's registry row. */
export class PostgresDriverWorker extends PostgresDriverBase {
  /**
   * CheckedStore hands the attempt transaction through unwrapped, so its success output is encoded
   * (and its size checked) here, as the outcome write's own check does it.
   */
  beginAttempt({ checkSuccess }: { readonly checkSuccess: SuccessCheck }): AttemptTransaction {
    const { dataSource, onStatement } = this.settings;
    return new PostgresAttemptTransaction(dataSource, this.sql.complete, checkSuccess, onStatement, (results) => this.outcomesApplied(results));
  }

  async jobEnqueueMany(params: DriverEnqueueParams): Promise<EnqueueResult[]> {
    const results = await this.enqueueMany(params);
    // Polling alone (a transaction pooler and no listenUrl): no NOTIFY reaches anyone, so this
    // process's own workers hear of the jobs from here. Inside the caller's transaction the hint
    // comes before the commit, and a claim it wakes may find nothing yet; the next poll will.
    if (!this.wakeListener.listening && results.length > 0) this.wakeListener.emit(ANY_QUEUE);
    return results;
  }

  private async enqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    const db = manager === undefined ? this.db : this.connections.joined(manager);
    if (jobs.length === 0) return [];
    // A batch that declares a rate limit writes it first, in the transaction its jobs commit in, so
    // none of them is visible to a claim without it. Rare, so every other batch keeps its one statement.
    if (jobs.some((job) => job.rateLimit)) {
      const declaring = async (tx: PgExecutor) => {
        await this.sql.declareRateLimits(tx, jobs);
        return this.enqueueIn(tx, jobs);
      };
      return manager === undefined ? this.connections.transaction(declaring) : declaring(db);
    }
    return this.enqueueIn(db, jobs, manager === undefined);
  }

  /**
   * Enqueues in `db`; `own` when `db` is the pool, so a batch with unique keys or sequences needs a
   * transaction of its own.
   */
  private async enqueueIn(db: PgExecutor, jobs: readonly NewJob[], own = false): Promise<EnqueueResult[]> {
    if (hasSequences(jobs)) {
      assertAcyclic(jobs);
      const sequenced = (tx: PgExecutor) =>
        enqueueSequenced(tx, jobs, {
          lock: (executor, keys) => this.sql.sequences.lock(executor, keys),
          states: (executor, ids) => this.sql.sequences.places(executor, ids),
          enqueue: (executor, batch, known, inLine) => this.enqueueKeyed(executor, batch, known, inLine),
          move: (executor, tails) => this.sql.sequences.move(executor, tails),
        });
      return own ? this.connections.transaction(sequenced) : sequenced(db);
    }
    if (hasKeys(jobs)) {
      assertAcyclic(jobs);
      const enqueue = (tx: PgExecutor) => this.enqueueKeyed(tx, jobs);
      return own ? this.connections.transaction(enqueue) : enqueue(db);
    }
    const created = await this.insertJobs(db, jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  /** Enqueues in a transaction: through the unique-key path when the batch has keys. */
  private async enqueueKeyed(tx: PgExecutor, jobs: readonly NewJob[], known?: ReadonlyMap<string, JobState>, inLine?: ReadonlySet<string>): Promise<EnqueueResult[]> {
    if (hasKeys(jobs)) return enqueueUniquePostgres(tx, jobs, this.sql.unique, (executor, batch) => this.insertJobs(executor, batch, known, inLine));
    const created = await this.insertJobs(tx, jobs, known, inLine);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    const rows = await this.claims.claim(this.db, params);
    // A full batch means a backlog: the moment a table without statistics hurts (see the guard).
    if (rows.length === params.limit) this.statistics = this.analyzeGuard.check(this.db);
    return rows.map(toJob);
  }

  async jobHeartbeat({ workerId, leases, leaseMs, withProgress }: DriverHeartbeatParams): Promise<HeartbeatResult> {
    return this.sql.heartbeat(this.heartbeatDb, workerId, leases, leaseMs, withProgress);
  }

  async jobCompleteMany({ workerId, outcomes }: DriverCompleteParams): Promise<OutcomeResult[]> {
    const applied = await this.sql.complete(this.db, workerId, outcomes);
    this.outcomesApplied(applied);
    return applied.results;
  }

  async jobCompleteAndClaim({ outcomes, claim }: DriverCompleteParams & { readonly claim: CheckedClaimParams }): Promise<CompleteAndClaimResult> {
    const { results, releasing, rows, claimError } = await this.claims.completeAndClaim(this.db, outcomes, claim);
    this.outcomesApplied({ results, releasing });
    if (rows.length === claim.limit) this.statistics = this.analyzeGuard.check(this.db);
    const jobs = rows.map(toJob);
    return claimError === undefined ? { results, jobs } : { results, jobs, claimError };
  }

  async jobRelinquishMany({ workerId, leases }: DriverRelinquishParams): Promise<OutcomeResult[]> {
    const results = await this.sql.relinquish(this.db, workerId, leases);
    // A relinquished job is due again; its statement's NOTIFY says so, and polling alone this hint does.
    const released = !this.wakeListener.listening && results.some((result) => result.status === 'applied' && result.state === 'scheduled');
    this.outcomesApplied({ results, releasing: released });
    return results;
  }

  async jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): Promise<ParentOutput> {
    return this.sql.parentOutput(this.db, jobId, ancestorId);
  }

  /**
   * On the pool, not the heartbeat's connection: a beat held up (by a lock, a busy server) must not
   * hold a lease renewal up behind it.
   */
  async nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    await this.sql.nodeBeat(this.db, params, this.finish);
  }

  async nodeStop({ id }: { readonly id: string }): Promise<void> {
    await this.sql.nodeStop(this.db, id);
  }
}
