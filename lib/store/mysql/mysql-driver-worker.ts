import { isTerminalState, type JobRecord, type JobState } from '../../core/index.js';
import { GroupTurns } from '../group-turns.js';
import type { DriverCompleteParams, DriverEnqueueParams, DriverHeartbeatParams, DriverRelinquishParams, SuccessCheck } from '../checked/store-driver.js';
import type { CheckedClaimParams, NormalizedOutcome } from '../checked/store-params.js';
import { claimOrder, toJob } from '../job-row.js';
import type { AttemptTransaction, CompleteAndClaimResult, EnqueueResult, ExpiredLease, HeartbeatResult, OutcomeResult } from '../job-store.types.js';
import { outcomeEvent } from '../outcome-event.js';
import { enqueueResults } from '../unique/unique-plan.js';
import { ANY_QUEUE } from '../wake-hints.js';
import { MysqlAttemptTransaction } from './mysql-attempt-transaction.js';
import { MysqlDriverReads } from './mysql-driver-reads.js';
import { EffectWriter, PARENT_IN_LINE } from './mysql-effects.js';
import type { MysqlExecutor } from './mysql-executor.js';
import { lockClaimCandidates } from './queries/claim-jobs.query.js';
import { claimLimited } from './queries/claim-limited.query.js';
import { provisionPending } from './mysql-limits.js';
import { windowCandidates, writeEnqueue } from './queries/enqueue-jobs.query.js';
import { readParents } from './queries/enqueue-reads.query.js';
import { lockedJobsOf, lockJobs, lockJobsStatements, type LockedJobs } from './queries/lock-jobs.query.js';
import { leanSuccesses } from './queries/lean-finish.query.js';



/** MysqlDriver's hot path: enqueue, claim, heartbeat, outcomes, relinquish, the lease sweep and the settle sweep. */
export class MysqlDriverWorker extends MysqlDriverReads {
  /** Where this store's next claim of each queue list takes its turn from (group-turns.ts). */
  private readonly turns = new GroupTurns();

  beginAttempt({ checkSuccess }: { readonly checkSuccess: SuccessCheck }): AttemptTransaction {
    return new MysqlAttemptTransaction(this.conns.dataSource, async (db, checked) => {
      const { results, effects } = await this.outcomes(db, checked.workerId, checked.outcomes);
      await db.script(effects.take());
      return { result: results[0]!, after: () => this.afterOutcomes(results, effects) };
    }, checkSuccess, this.conns.onStatement);
  }

  async jobEnqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    if (jobs.length === 0 && manager === undefined) return [];
    const planned =
      manager !== undefined
        ? await (async () => {
            const db = await this.conns.joined(manager);
            return writeEnqueue(db, this.naming, jobs, new EffectWriter(this.naming, this.historyPolicy, await this.now(db)), (statements) => db.script(statements), {
              parents: (ids, sequenced) => this.conns.session((own) => readParents(own, this.naming, ids, sequenced)),
              windowHolders: (windowed, now) => this.conns.session((own) => windowCandidates(own, this.naming, windowed, now)),
            });
          })()
        : await this.conns.transaction(async (tx) =>
            writeEnqueue(tx, this.naming, jobs, new EffectWriter(this.naming, this.historyPolicy, await this.now(tx)), (statements) => tx.commitWith(statements)),
          );
    for (const queue of planned.due) this.hints.emit(queue);
    return enqueueResults(jobs, planned.created, planned.plan, planned.replaced);
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    for (let provisioned = false; ; provisioned = true) {
      const claim = await this.conns.transaction(async (tx) => {
        const candidates = await lockClaimCandidates(tx, this.naming, params);
        // A limit declared at enqueue goes into effect first, in a transaction of its own (mysql-limits.ts).
        if (candidates.pending && !provisioned) return null;
        const effects = new EffectWriter(this.naming, this.historyPolicy, candidates.now);
        const limited = candidates.limited ? await claimLimited(tx, this.naming, params, candidates.now, candidates.jobs, this.turns) : null;
        const rows = (limited?.picked ?? candidates.jobs).flatMap((job) => effects.apply(job, { kind: 'claim', workerId: params.workerId, leaseMs: params.leaseMs }) ?? []);
        await tx.commitWith([...(limited?.statements ?? []), ...effects.take()]);
        return { rows, limited };
      });
      if (claim === null) {
        await this.conns.transaction((tx) => provisionPending(tx, this.naming));
        continue;
      }
      this.heldWake.seen(claim.limited?.held ?? false);
      if (claim.limited?.rateWakeMs != null) this.rateWake.after(claim.limited.rateWakeMs);
      if (claim.limited?.again) this.heldWake.again();
      return claim.rows.sort(claimOrder).map(toJob);
    }
  }

  async jobHeartbeat({ workerId, leases, leaseMs }: DriverHeartbeatParams): Promise<HeartbeatResult> {
    if (leases.length === 0) return { renewed: [], lost: [] };
    return this.conns.transaction(async (tx) => {
      const { now, jobs } = await lockJobs(tx, this.naming, [...new Set(leases.map((l) => l.jobId))], { clockAfterLocks: true });
      const effects = new EffectWriter(this.naming, this.historyPolicy, now);
      const renewed: HeartbeatResult['renewed'][number][] = [];
      const lost: HeartbeatResult['lost'][number][] = [];
      for (const lease of leases) {
        const job = jobs.get(lease.jobId);
        const renewal = job && effects.renew(job, { kind: 'heartbeat', workerId, attempt: lease.attempt, leaseMs }, lease.progress);
        if (!job || !renewal) {
          lost.push({ jobId: lease.jobId, attempt: lease.attempt });
          continue;
        }
        jobs.set(lease.jobId, { ...job, row: renewal });
        renewed.push({ jobId: lease.jobId, attempt: lease.attempt, leasedUntil: new Date(renewal.leasedUntil!), cancelRequested: renewal.cancelRequested });
      }
      await tx.commitWith(effects.take());
      return { renewed, lost };
    });
  }

  async jobCompleteMany({ workerId, outcomes }: DriverCompleteParams): Promise<OutcomeResult[]> {
    if (outcomes.length === 0) return [];
    const { results, effects } = await this.conns.transaction(async (tx) => {
      const written = await this.outcomes(tx, workerId, outcomes);
      await tx.commitWith(written.effects.take());
      return written;
    });
    this.afterOutcomes(results, effects);
    return results;
  }

  async jobRelinquishMany({ workerId, leases }: DriverRelinquishParams): Promise<OutcomeResult[]> {
    if (leases.length === 0) return [];
    const { results, effects } = await this.conns.transaction(async (tx) => {
      const { now, jobs } = await lockJobs(tx, this.naming, [...new Set(leases.map((l) => l.jobId))], { guard: true });
      const effects = new EffectWriter(this.naming, this.historyPolicy, now);
      const results = leases.map((lease): OutcomeResult => {
        const job = jobs.get(lease.jobId);
        const after = job && effects.apply(job, { kind: 'relinquish', workerId, attempt: lease.attempt });
        if (!job || !after) return { jobId: lease.jobId, attempt: lease.attempt, status: 'stale' };
        jobs.set(lease.jobId, { ...job, row: after });
        return { jobId: lease.jobId, attempt: lease.attempt, status: 'applied', state: after.state };
      });
      await effects.settle(tx);
      await tx.commitWith(effects.take());
      return { results, effects };
    });
    for (const queue of effects.woken) this.hints.emit(queue);
    if (!results.some((r) => r.status === 'applied' && r.state === 'scheduled')) this.heldWake.applied(results);
    return results;
  }

  async jobExpireLeases({ limit }: { readonly limit: number }): Promise<ExpiredLease[]> {
    const { expired, woken } = await this.conns.transaction(async (tx) => {
      // Lapsed leases no claim will take (exhausted, or cancel-requested), paused queues included:
      // found first, then guarded and locked by id, so their open edges are read under the guard.
      const found = await tx.query<{ id: string }>(
        `SELECT id FROM ${this.naming.jobs}
         WHERE state = 'running' AND leased_until <= UTC_TIMESTAMP(3) AND (attempt >= max_attempts OR cancel_requested = TRUE)
         ORDER BY leased_until, seq LIMIT ?`,
        [limit],
      );
      if (found.length === 0) return { expired: [], woken: [] };
      const locked = await lockJobs(tx, this.naming, found.map((r) => r.id), { guard: true });
      const rows = [...locked.jobs.values()];
      const effects = new EffectWriter(this.naming, this.historyPolicy, locked.now);
      const expired = rows.flatMap((job): ExpiredLease[] => {
        const after = effects.apply(job, { kind: 'expire' });
        return after ? [{ jobId: after.id, attempt: after.attempt, state: after.state }] : [];
      });
      await effects.settle(tx);
      await tx.commitWith(effects.take());
      return { expired, woken: [...effects.woken] };
    });
    for (const queue of woken) this.hints.emit(queue);
    return expired;
  }

  async jobSettleDependencies({ limit }: { readonly limit: number }): Promise<number> {
    const { settled, woken } = await this.conns.transaction(async (tx) => {
      // Open edges whose parent ended: left by a write that reached its edge budget, or by a crash.
      // A sequence edge its parent holds (settleRound says when) is not one of them.
      const parents = await tx.query<{ id: string; state: JobState }>(
        `SELECT DISTINCT p.id, p.state FROM ${this.naming.dependencies} e JOIN ${this.naming.jobs} p ON p.id = e.parent_id
         WHERE e.settled = FALSE AND p.state IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined')
           AND (e.sequence IS NULL OR (NOT (e.sequence = 'block' AND p.state IN ('dead_lettered', 'quarantined')) AND NOT ${PARENT_IN_LINE(this.naming, 'e')}))
         LIMIT ?`,
        [limit],
      );
      if (parents.length === 0) return { settled: 0, woken: [] };
      const effects = new EffectWriter(this.naming, this.historyPolicy, await this.now(tx));
      let settled = await effects.settleRound(tx, new Map(parents.map((p) => [p.id, p])), limit);
      settled += await effects.settle(tx);
      await tx.commitWith(effects.take());
      return { settled, woken: [...effects.woken] };
    });
    if (settled > 0) this.hints.emit(ANY_QUEUE);
    for (const queue of woken) this.hints.emit(queue);
    return settled;
  }

  /**
   * The fenced outcome write, on every path that writes one (a batch, or an attempt's own
   * transaction), staged in `db`'s open transaction: the jobs locked, each outcome judged by the
   * lifecycle against the live lease on the database's clock, and its effects staged. Under the
   * `lean` finish a success nothing needs is written without its history entry and deleted.
   */
  protected async outcomes(db: MysqlExecutor, workerId: string, outcomes: readonly NormalizedOutcome[], locked?: LockedJobs) {
    const { now, jobs } = locked ?? (await lockJobs(db, this.naming, [...new Set(outcomes.map((o) => o.jobId))], { guard: true }));
    const effects = new EffectWriter(this.naming, this.historyPolicy, now);
    const lean = this.finish === 'lean' ? await leanSuccesses(db, this.naming, outcomes, jobs) : new Set<string>();
    const results = outcomes.map((outcome): OutcomeResult => {
      const job = jobs.get(outcome.jobId);
      const after = job && (lean.has(outcome.jobId) ? effects.applyLean(job, outcomeEvent(workerId, outcome)) : effects.apply(job, outcomeEvent(workerId, outcome)));
      if (!job || !after) return { jobId: outcome.jobId, attempt: outcome.attempt, status: 'stale' };
      jobs.set(outcome.jobId, { ...job, row: after });
      return { jobId: outcome.jobId, attempt: outcome.attempt, status: 'applied', state: after.state };
    });
    await effects.settle(db);
    return { results, effects };
  }

  /**
   * Outcomes, then a claim, in one transaction of two round trips: the outcomes' locking read goes
   * with the claim's reads, and the outcomes' writes with the claim's and the COMMIT. The claim
   * judges by the outcomes' instant. A claim that must first put a declared limit into effect
   * commits the outcomes alone and claims in a transaction of its own.
   */
  async jobCompleteAndClaim({ workerId, outcomes, claim }: DriverCompleteParams & { readonly claim: CheckedClaimParams }): Promise<CompleteAndClaimResult> {
    const written = await this.conns.transaction(async (tx) => {
      const ids = [...new Set(outcomes.map((o) => o.jobId))];
      const candidates = await lockClaimCandidates(tx, this.naming, claim, lockJobsStatements(this.naming, ids, { guard: true }));
      const { results, effects } = await this.outcomes(tx, workerId, outcomes, { now: candidates.now, jobs: lockedJobsOf(candidates.before) });
      if (candidates.pending) {
        await tx.commitWith(effects.take());
        return { results, effects, claimed: null };
      }
      // A limited claim counts the jobs that run: the outcomes' writes go first, so the room they free counts.
      if (candidates.limited) await effects.flush(tx);
      const limited = candidates.limited ? await claimLimited(tx, this.naming, claim, candidates.now, candidates.jobs, this.turns) : null;
      const rows = (limited?.picked ?? candidates.jobs).flatMap((job) => effects.apply(job, { kind: 'claim', workerId, leaseMs: claim.leaseMs }) ?? []);
      await tx.commitWith([...(limited?.statements ?? []), ...effects.take()]);
      return { results, effects, claimed: { rows, limited } };
    });
    this.afterOutcomes(written.results, written.effects);
    if (written.claimed === null) {
      try {
        return { results: written.results, jobs: await this.jobClaim(claim) };
      } catch (claimError) {
        return { results: written.results, jobs: [], claimError };
      }
    }
    const { rows, limited } = written.claimed;
    this.heldWake.seen(limited?.held ?? false);
    if (limited?.rateWakeMs != null) this.rateWake.after(limited.rateWakeMs);
    if (limited?.again) this.heldWake.again();
    return { results: written.results, jobs: rows.sort(claimOrder).map(toJob) };
  }

  /** Hints once outcomes committed: queues that got due work, and room for held-back jobs. */
  protected afterOutcomes(results: readonly OutcomeResult[], effects: EffectWriter): void {
    for (const queue of effects.woken) this.hints.emit(queue);
    if (results.some((r) => r.status === 'applied' && isTerminalState(r.state as JobState))) this.finishHints.emit(ANY_QUEUE);
    this.heldWake.applied(results);
  }
}
