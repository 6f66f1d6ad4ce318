import type { RowView } from '../sim-event.js';
import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

/**
 * Claims take due jobs by priority first. After each claim, no job it could have taken instead is
 * left behind with a more urgent priority than one it took: a scheduled, due job of a queue the
 * claim asked for, with attempts left. Jobs with a concurrency key are left out of the check, since
 * a saturated key passes them over by design.
 */
export class PriorityOrderOracle extends PerCallOracle {
  readonly name = 'priority_order';
  private readonly rows = new Map<string, RowView>();

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const write of writes) this.rows.set(write.after.id, write.after);
    if (call.op !== 'jobClaim' || call.error || !workerOf(call)) return;
    const claimedDue = writes.filter((w) => w.before?.state === 'scheduled' && w.after.state === 'running').map((w) => w.after);
    if (claimedDue.length === 0) return;
    const worst = Math.max(...claimedDue.map((row) => row.priority));
    const queues = new Set((call.args as readonly [{ readonly queues: readonly string[] }])[0].queues);
    for (const row of this.rows.values()) {
      if (row.state !== 'scheduled' || row.runAt > call.at || row.attempt >= row.maxAttempts || row.concurrencyKey !== null || !queues.has(row.queue)) continue;
      if (row.priority < worst) this.flag(`a claim at ${call.at} took a job of priority ${worst} and left ${row.id} of priority ${row.priority}, due since ${row.runAt}`);
    }
  }
}
