import type { RowView } from '../sim-event.js';
import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

/**
 * Fair groups (docs/groups.md): within a priority, a claim takes the first job of every group with
 * due work before the second job of any. After each claim that took two or more due jobs of one
 * group at one priority, no other group may be left with nothing from the claim while it had a
 * due job of that priority or a more urgent one, of a queue the claim asked for, with attempts
 * left. The simulated groups have no limits (their key space is apart from every concurrency
 * key), so none of their jobs is held back by design.
 */
export class GroupTurnsOracle extends PerCallOracle {
  readonly name = 'group_turns';
  private readonly rows = new Map<string, RowView>();
  /** Each job's group, from the first write that showed it: a claim's own write may not. */
  private readonly groups = new Map<string, string>();

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const write of writes) {
      this.rows.set(write.after.id, write.after);
      if (write.after.group !== undefined) this.groups.set(write.after.id, write.after.group);
    }
    const groupOf = (row: RowView) => this.groups.get(row.id);
    if (call.op !== 'jobClaim' || call.error || !workerOf(call)) return;
    const taken = writes.filter((w) => w.after.state === 'running' && (w.before?.state !== 'running' || w.after.attempt > w.before.attempt)).map((w) => w.after);
    const servedGroups = new Set(taken.map((row) => groupOf(row) ?? ''));
    const twice = new Map<string, number>();
    const count = new Map<string, number>();
    for (const write of writes) {
      const group = groupOf(write.after);
      if (write.before?.state !== 'scheduled' || write.after.state !== 'running' || group === undefined) continue;
      const key = `${group}\u0000${write.after.priority}`;
      const n = (count.get(key) ?? 0) + 1;
      count.set(key, n);
      if (n === 2) twice.set(key, write.after.priority);
    }
    if (twice.size === 0) return;
    const queues = new Set((call.args as readonly [{ readonly queues: readonly string[] }])[0].queues);
    for (const [key, priority] of twice) {
      const group = key.split('\u0000')[0]!;
      for (const row of this.rows.values()) {
        const other = groupOf(row);
        if (other === undefined || other === group || servedGroups.has(other)) continue;
        if (row.state !== 'scheduled' || row.runAt > call.at || row.attempt >= row.maxAttempts || !queues.has(row.queue) || row.priority > priority) continue;
        this.flag(`a claim at ${call.at} took two jobs of group ${group} at priority ${priority} and none of group ${other}, whose ${row.id} of priority ${row.priority} was due since ${row.runAt}`);
        return;
      }
    }
  }
}
