import type { SimEvent } from '../sim-event.js';
import { Oracle, workerOf } from './oracle.js';

interface Grant {
  readonly workerId: string;
  readonly attempt: number;
  until: number;
}

/**
 * At most one live lease per job. Tracks what the store handed out (claims and renewals, whether
 * or not the reply arrived): a new lease while another worker's is unexpired, or a renewal for a
 * worker that does not hold the job's current lease, is a violation.
 */
export class SingleLeaseOracle extends Oracle {
  readonly name = 'single_live_lease';
  private readonly grants = new Map<string, Grant>();

  onEvent(event: SimEvent): void {
    if (event.type === 'write' && event.before?.state === 'running' && event.after.state !== 'running') this.grants.delete(event.after.id);
    if (event.type !== 'call' || event.error) return;
    const workerId = workerOf(event);
    if (event.op === 'jobClaim' && workerId) {
      for (const { jobId, attempt, leasedUntil } of event.result as { jobId: string; attempt: number; leasedUntil: number }[]) {
        const held = this.grants.get(jobId);
        if (held && held.until > event.at) this.flag(`${workerId} got attempt ${attempt} of ${jobId} while ${held.workerId} held attempt ${held.attempt} until ${held.until}`);
        this.grants.set(jobId, { workerId, attempt, until: leasedUntil });
      }
    }
    if (event.op === 'jobHeartbeat' && workerId) {
      const { renewed } = event.result as { renewed: { jobId: string; attempt: number; leasedUntil: number }[] };
      for (const { jobId, attempt, leasedUntil } of renewed) {
        const held = this.grants.get(jobId);
        if (!held || held.workerId !== workerId || held.attempt !== attempt) {
          this.flag(`${workerId} renewed attempt ${attempt} of ${jobId}, whose lease was ${held ? `${held.workerId} attempt ${held.attempt}` : 'not held'}`);
        } else if (held.until <= event.at) {
          this.flag(`${workerId} renewed attempt ${attempt} of ${jobId} after it lapsed`);
        } else {
          held.until = leasedUntil;
        }
      }
    }
  }
}
