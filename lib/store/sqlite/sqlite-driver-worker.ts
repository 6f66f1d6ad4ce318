import type { JobRecord } from '../../core/index.js';
import type {
  DriverCompleteParams,
  DriverEnqueueParams,
  DriverHeartbeatParams,
  DriverNodeBeatParams,
  DriverParentOutputParams,
  DriverRelinquishParams,
  SuccessCheck,
} from '../checked/store-driver.js';
import { toJob } from '../job-row.js';
import type { AttemptTransaction, EnqueueResult, HeartbeatResult, OutcomeResult, ParentOutput } from '../job-store.types.js';
import { type CheckedClaimParams, type NormalizedOutcome } from '../checked/store-params.js';
import { enqueueResults } from '../unique/unique-plan.js';
import { ANY_QUEUE } from '../wake-hints.js';
import { SqliteAttemptTransaction } from './sqlite-attempt-transaction.js';
import { SqliteDriverBase } from './sqlite-driver-base.js';

/** SqliteDriver's hot path: enqueue, claim, heartbeat, outcomes, and the node's registry row. */
export class SqliteDriverWorker extends SqliteDriverBase {
  /**
   * CheckedStore hands the attempt transaction out as it is, so its success write checks its own
   * outcome, with the same check as every outcome write.
   */
  beginAttempt({ checkSuccess }: { readonly checkSuccess: SuccessCheck }): AttemptTransaction {
    return new SqliteAttemptTransaction(this.conn.dataSource, this.gate, (workerId, jobId, attempt, output) => {
      const checked = checkSuccess(workerId, jobId, attempt, output);
      // Inside the attempt's open transaction: a hint sent before it commits only wakes a claim that waits for the gate.
      return this.conn.inOpenTransaction(() => this.complete(checked.workerId, checked.outcomes, this.conn.now()))[0]!;
    });
  }

  async jobEnqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    const due = new Set<string>();
    const write = (now: number) => {
      const inserted = this.conn.statements().enqueue(jobs, now);
      for (const queue of inserted.due) due.add(queue);
      return enqueueResults(jobs, inserted.created, inserted.plan, inserted.replaced);
    };
    // Written in the caller's open transaction (its manager's, or an attempt's): uncommitted until
    // that ends, so its own status reads leave these jobs out.
    const inCallerTransaction = manager !== undefined || this.conn.gate.callerHolds() !== null;
    let results: EnqueueResult[];
    if (manager !== undefined) {
      this.conn.checkManager(manager);
      // The caller's transaction is open on this very connection, and the caller holds the gate.
      // A hint sent before it commits is harmless: any claim it triggers waits for the gate.
      results = this.conn.inOpenTransaction(() => write(this.conn.now()));
    } else {
      if (jobs.length === 0) return [];
      results = await this.conn.write(write);
    }
    if (inCallerTransaction) this.conn.gate.noteInserted(results.filter((r) => r.created).map((r) => r.id));
    for (const queue of due) this.hints.emit(queue);
    return results;
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    return (
      await this.conn.write((now) => {
        const sql = this.conn.statements();
        if (sql.limitsExist()) return sql.claimLimited(params, now, this.claimSignals);
        this.heldWake.seen(false);
        return sql.claimUnlimited(params, now);
      })
    ).map(toJob);
  }

  async jobHeartbeat({ workerId, leases, leaseMs }: DriverHeartbeatParams): Promise<HeartbeatResult> {
    if (leases.length === 0) return { renewed: [], lost: [] };
    const { gate } = this.conn;
    // An attempt waiting for another process's lock is about to hold the connection; queueing
    // behind it would wait for its whole handler, so wait for its BEGIN and renew inside it.
    const opening = gate.callerHolds() === null ? gate.attemptOpening() : null;
    if (opening) await opening.catch(() => undefined);
    if (gate.holderIsOpenAttempt() && gate.callerHolds() === null) {
      // An attempt holds the only connection, maybe for longer than a lease. Waiting would let every
      // lease lapse, so renew inside its open transaction; the renewal commits with it.
      return this.conn.inOpenTransaction(() => this.conn.statements().heartbeat(workerId, leases, leaseMs, this.conn.now()));
    }
    return this.conn.write((now) => this.conn.statements().heartbeat(workerId, leases, leaseMs, now));
  }

  async jobCompleteMany({ workerId, outcomes }: DriverCompleteParams): Promise<OutcomeResult[]> {
    if (outcomes.length === 0) return [];
    return this.conn.write((now) => this.complete(workerId, outcomes, now));
  }

  async jobRelinquishMany({ workerId, leases }: DriverRelinquishParams): Promise<OutcomeResult[]> {
    if (leases.length === 0) return [];
    const results = await this.conn.write((now) => this.conn.statements().relinquish(workerId, leases, now));
    if (results.some((r) => r.status === 'applied' && r.state === 'scheduled')) this.hints.emit(ANY_QUEUE);
    else this.heldWake.applied(results);
    return results;
  }

  async jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): Promise<ParentOutput> {
    return this.conn.read(() => this.conn.statements().parentOutput(jobId, ancestorId));
  }

  /**
   * A write of its own, waiting its turn at the gate like any other; never inside an open attempt
   * transaction as a heartbeat may be, whose rollback would undo it.
   */
  async nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    await this.conn.write((now) => this.conn.statements().nodeBeat(params, this.finish, now));
  }

  async nodeStop({ id }: { readonly id: string }): Promise<void> {
    await this.conn.write((now) => this.conn.statements().nodeStop(id, now));
  }

  /** The fenced outcome write, on every path that writes one (a batch, or an attempt's own transaction). */
  private complete(workerId: string, outcomes: readonly NormalizedOutcome[], now: number): OutcomeResult[] {
    this.hints.ifReleasing(outcomes.map((o) => o.jobId));
    const results = this.conn.statements().complete(workerId, outcomes, now, this.finish);
    // Inside the write: a claim the hint wakes waits for the gate, so it reads after the commit.
    this.heldWake.applied(results);
    return results;
  }
}
