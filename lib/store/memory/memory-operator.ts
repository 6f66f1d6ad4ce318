import { newRateWindow, resizeRateWindow } from '../rate-window.js';
import type { DriverJobCancelParams, DriverJobWriteParams, DriverLimitSetParams, DriverQueuePausedParams, DriverRateLimitSetParams } from '../checked/store-driver.js';
import type { AuditEntry } from '../schedules/schedule-tx.js';
import type { MemoryLifecycle } from './memory-lifecycle.js';
import type { MemoryState } from './memory-tables.js';

/**
 * The operator's writes, each with the audit entry CheckedStore composed. One call runs start to
 * finish with nothing in between, so deciding and auditing need no transaction around them: a
 * `decide` that throws leaves the audit log untouched.
 */
export class MemoryOperator {
  constructor(
    private readonly state: MemoryState,
    private readonly life: MemoryLifecycle,
  ) {}

  replay<R>({ jobId, write }: DriverJobWriteParams<R>): R {
    const result = write.decide(this.life.replayJob(jobId));
    this.audit(write.audit(result));
    return result;
  }

  cancel<R>({ jobId, write, onlyFrom }: DriverJobCancelParams<R>): R {
    const result = write.decide(this.life.operator(jobId, { kind: 'cancel', onlyFrom }));
    this.audit(write.audit(result));
    return result;
  }

  runNow<R>({ jobId, write }: DriverJobWriteParams<R>): R {
    const result = write.decide(this.life.operator(jobId, { kind: 'run_now' }));
    this.audit(write.audit(result));
    return result;
  }

  setPaused({ queue, paused, audit }: DriverQueuePausedParams): void {
    const { pausedQueues, knownQueues } = this.state.tables;
    if (paused) {
      pausedQueues.add(queue);
    } else {
      pausedQueues.delete(queue);
      knownQueues.add(queue);
    }
    this.audit(audit);
  }

  /** A limit left as it was (the same max, or a removal where there is none) is no change, and no audit entry. */
  setLimit({ key, max, audit }: DriverLimitSetParams): void {
    const { concurrencyLimits } = this.state.tables;
    if ((concurrencyLimits.get(key) ?? null) === max) return;
    if (max === null) concurrencyLimits.delete(key);
    else concurrencyLimits.set(key, max);
    this.audit(audit);
  }

  setRateLimit({ key, rate, audit }: DriverRateLimitSetParams): void {
    const { rateLimits } = this.state.tables;
    const held = rateLimits.get(key);
    if (rate === null ? !held : held?.max === rate.max && held.perMs === rate.perMs) return;
    if (rate === null) rateLimits.delete(key);
    else rateLimits.set(key, held ? resizeRateWindow(held, rate) : newRateWindow(rate));
    this.audit(audit);
  }

  /** Appends to the audit log, stamped with the store's clock. */
  audit(entry: AuditEntry): void {
    this.state.tables.auditLog.push({
      id: this.state.tables.nextAuditId++,
      at: new Date(this.state.clock.now()),
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      detail: entry.detail ?? null,
    });
  }
}
