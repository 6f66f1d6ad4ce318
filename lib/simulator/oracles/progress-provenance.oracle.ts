import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

/** A lease as a heartbeat's arguments carry it, with the progress it reported, if any. */
interface SentLease {
  readonly jobId: string;
  readonly attempt: number;
  readonly progress?: unknown;
}

/**
 * A stale worker's progress never lands: a job's progress changes only by a heartbeat whose worker
 * held that attempt's live lease, to the value that lease carried. The simulated handlers report
 * their own worker and attempt, so the value a row holds must name the lease it was written under.
 */
export class ProgressProvenanceOracle extends PerCallOracle {
  readonly name = 'progress_provenance';

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    const sent = call.op === 'jobHeartbeat' ? leasesOf(call) : new Map<string, SentLease>();
    for (const { before, after } of writes) {
      const lease = sent.get(after.id);
      const carried = lease !== undefined && lease.progress !== undefined;
      if (!carried) {
        if ((before?.progress ?? null) !== after.progress) this.flag(`${call.op} changed the progress of ${after.id} without a heartbeat that reported it`);
        continue;
      }
      const reporter = workerOf(call);
      if (!before || before.state !== 'running' || before.workerId !== reporter || before.attempt !== lease.attempt) {
        this.flag(`progress from ${reporter} attempt ${lease.attempt} landed on ${after.id}, whose lease was ${before?.workerId ?? 'nobody'} attempt ${before?.attempt ?? 0} (${before?.state ?? 'absent'})`);
      } else if (before.leasedUntil === null || before.leasedUntil <= call.at) {
        this.flag(`progress from ${reporter} attempt ${lease.attempt} landed on ${after.id} after its lease lapsed`);
      } else if (after.progress !== JSON.stringify(lease.progress)) {
        this.flag(`the progress of ${after.id} is not the value its heartbeat carried`);
      } else if (!namesLease(after.progress, reporter, lease.attempt)) {
        this.flag(`the progress of ${after.id} names another attempt than the lease it was written under`);
      }
    }
  }
}

function leasesOf(call: CallEvent): Map<string, SentLease> {
  const [params] = call.args as [{ leases: SentLease[] }];
  return new Map(params.leases.map((lease) => [lease.jobId, lease]));
}

/** True unless the value is a simulated handler's report naming someone else. */
function namesLease(progress: string, workerId: string | null, attempt: number): boolean {
  const value = JSON.parse(progress) as { workerId?: unknown; attempt?: unknown } | null;
  if (value === null || typeof value !== 'object' || !('workerId' in value)) return true;
  return value.workerId === workerId && value.attempt === attempt;
}
