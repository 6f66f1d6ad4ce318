import type { Outcome } from '../../store/index.js';
import { SIM_MAX_SNOOZES } from '../sim-settings.js';
import { PerCallOracle, type CallEvent, type WriteEvent } from './oracle.js';

const REPORTS = new Set(['jobCompleteMany', 'jobCompleteAndClaim']);

/**
 * A snooze spends none of the retry budget and does only what it says (docs/snooze.md): an applied
 * snooze keeps the attempt, adds one to `maxAttempts` and to `snoozes`, clears the error and makes
 * the job due after exactly its delay, or, on a cancel-requested job, cancels it with the budget
 * as it was. Across every write of a run, `maxAttempts - snoozes` (the retry budget) stays what
 * the job was enqueued with, and no job snoozes more often than its handler allows.
 */
export class SnoozeOracle extends PerCallOracle {
  readonly name = 'snooze_keeps_budget';
  private readonly budgets = new Map<string, number>();

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const { after } of writes) {
      const budget = after.maxAttempts - after.snoozes;
      const enqueued = this.budgets.get(after.id);
      if (enqueued === undefined) this.budgets.set(after.id, budget);
      else if (budget !== enqueued) this.flag(`${call.op} left ${after.id} a retry budget of ${budget} (maxAttempts ${after.maxAttempts}, ${after.snoozes} snoozes), enqueued with ${enqueued}`);
      if (after.snoozes > SIM_MAX_SNOOZES) this.flag(`${after.id} snoozed ${after.snoozes} times, more than the handler's ${SIM_MAX_SNOOZES}`);
    }
    if (!REPORTS.has(call.op) || call.error !== null) return;
    const outcomes = (call.args as { outcomes?: readonly Outcome[] }).outcomes ?? [];
    for (const outcome of outcomes) {
      if (outcome.kind !== 'snoozed') continue;
      const write = writes.find((w) => w.after.id === outcome.jobId && w.before?.state === 'running' && w.before.attempt === outcome.attempt);
      if (write) this.checkSnooze(write, outcome.delayMs);
    }
  }

  private checkSnooze({ at, before, after }: WriteEvent, delayMs: number): void {
    const was = before!;
    if (after.state === 'cancelled') {
      if (!was.cancelRequested || after.snoozes !== was.snoozes || after.maxAttempts !== was.maxAttempts) {
        this.flag(`a snooze cancelled ${after.id} (cancel requested: ${was.cancelRequested}) and changed its budget`);
      }
      return;
    }
    const kept = after.state === 'scheduled' && after.attempt === was.attempt && after.snoozes === was.snoozes + 1 && after.maxAttempts === was.maxAttempts + 1;
    if (!kept) this.flag(`a snooze of ${after.id} attempt ${was.attempt} left it ${after.state}, attempt ${after.attempt}, ${after.snoozes} snoozes, maxAttempts ${after.maxAttempts}`);
    if (after.lastError !== null) this.flag(`a snooze of ${after.id} left the error "${after.lastError}"`);
    if (after.runAt !== at + delayMs) this.flag(`a snooze of ${after.id} for ${delayMs} ms made it due at +${after.runAt - at} ms`);
  }
}
