import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

const REPORTS = new Set(['jobCompleteMany', 'jobRelinquishMany']);
const LAPSE_SETTLERS = new Set(['jobClaim', 'jobExpireLeases']);

/**
 * Every write that ends an attempt came from the live lease of that exact attempt: a worker's
 * report is applied only if that worker held the unexpired lease for the attempt it reported; a
 * claim or the sweep may end an attempt only after its lease lapsed. Nothing else may end one.
 */
export class OutcomeProvenanceOracle extends PerCallOracle {
  readonly name = 'outcome_provenance';

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const { before, after } of writes) {
      if (!before) continue;
      const endsAttempt = before.state === 'running' && (after.state !== 'running' || after.attempt !== before.attempt);
      if (REPORTS.has(call.op)) {
        const reporter = workerOf(call);
        const reported = reportsOf(call).find((r) => r.jobId === before.id);
        // Writes to jobs nobody reported are the effects of a report (a released dependant);
        // other oracles judge those. Only a running job must never be touched that way.
        if (!reported) {
          if (endsAttempt) this.flag(`${call.op} from ${reporter} ended ${before.id}, which it did not report`);
        } else if (before.state !== 'running') this.flag(`${call.op} from ${reporter} applied attempt ${reported.attempt} of ${before.id}, which was ${before.state}`);
        else if (before.workerId !== reporter || before.attempt !== reported.attempt) {
          this.flag(`${call.op} from ${reporter} attempt ${reported.attempt} applied to ${before.id}, whose live lease was ${before.workerId} attempt ${before.attempt}`);
        } else if (before.leasedUntil === null || before.leasedUntil <= call.at) {
          this.flag(`${call.op} from ${reporter} applied to ${before.id} attempt ${reported.attempt} after its lease lapsed`);
        }
      } else if (endsAttempt) {
        if (!LAPSE_SETTLERS.has(call.op)) this.flag(`${call.op} ended attempt ${before.attempt} of ${before.id}`);
        else if (before.leasedUntil === null || before.leasedUntil > call.at) this.flag(`${call.op} ended attempt ${before.attempt} of ${before.id} while its lease was live`);
      }
    }
  }
}

function reportsOf(call: CallEvent): { jobId: string; attempt: number }[] {
  const args = call.args as { outcomes?: { jobId: string; attempt: number }[] } | [{ leases: { jobId: string; attempt: number }[] }];
  if (Array.isArray(args)) return args[0].leases;
  return args.outcomes ?? [];
}
