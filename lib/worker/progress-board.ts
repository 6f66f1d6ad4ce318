import { ProgressRefusedError, StoreBusyError } from '../core/index.js';
import type { HeartbeatLease, HeartbeatResult, LeaseRef } from '../store/index.js';
import { describeError } from './log-text.js';
import type { SchedulerLogger } from './scheduler-logger.js';

/** A reported value waiting for its write, and the callers of `written()` waiting on it or on values it replaced. */
interface Report {
  readonly attempt: number;
  readonly value: unknown;
  readonly waiters: { resolve(): void; reject(error: Error): void }[];
}

/** One running attempt's progress: the latest value not yet sent, and the one a heartbeat carries now. */
interface Slot {
  readonly attempt: number;
  pending: Report | undefined;
  sending: Report | undefined;
  /** Settles when the write in flight does; a final flush waits for it, so writes land in order. */
  sent: Promise<void> | undefined;
  release: (() => void) | undefined;
}

/**
 * The progress of the attempts this node runs, between `ctx.reportProgress` and the store. Reports
 * coalesce: the latest value wins, and it rides on the next heartbeat's renewal, so a job gets at
 * most one progress write per heartbeat interval and a heartbeat carries none when nothing was
 * reported. One write per job is in flight at a time, so an older value never lands after a newer
 * one. The attempt's last unsent value is written when the attempt ends, before its outcome.
 * A report resolves once queued, never on the write: awaiting one must not cost a heartbeat
 * interval (issue 35 item 15). `written()` is there for the caller who needs the write itself.
 */
export class ProgressBoard {
  /** By `jobId:attempt`; a slot exists only for an attempt that reported, so a node whose handlers never report keeps it empty. */
  private readonly slots = new Map<string, Slot>();
  /** Attempts whose progress the store refused: their lease is gone, so later reports are refused at once, without a write. */
  private readonly refused = new Set<string>();

  constructor(private readonly logger: SchedulerLogger) {}

  /**
   * Queues `value` (already checked and copied) for the attempt's next write, replacing a value not
   * sent yet. Resolves at once: a handler that awaits each report is never held for a heartbeat.
   * Rejects at once, with {@link ProgressRefusedError}, once the store has refused this attempt's
   * progress (its lease is gone).
   */
  report(jobId: string, attempt: number, value: unknown): Promise<void> {
    const key = `${jobId}:${attempt}`;
    if (this.refused.has(key)) return refusal(jobId, attempt);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { attempt, pending: undefined, sending: undefined, sent: undefined, release: undefined };
      this.slots.set(key, slot);
    }
    // Whoever waits for the value this one replaces waits for this one now.
    slot.pending = { attempt, value, waiters: slot.pending?.waiters ?? [] };
    return ACCEPTED;
  }

  /**
   * Resolves once the attempt's last reported value, or a later one, is written; at once when
   * nothing reported waits for a write. Rejects with {@link ProgressRefusedError} when the store
   * refuses it because the lease is gone, and with the store's error when the attempt's last write
   * fails.
   */
  written(jobId: string, attempt: number): Promise<void> {
    const key = `${jobId}:${attempt}`;
    if (this.refused.has(key)) return refusal(jobId, attempt);
    const slot = this.slots.get(key);
    const report = slot?.pending ?? slot?.sending;
    if (!report) return ACCEPTED;
    return handled(new Promise<void>((resolve, reject) => report.waiters.push({ resolve, reject })));
  }

  /** The heartbeat's leases, each carrying its attempt's pending progress unless a write of it is in flight. */
  attach(leases: readonly LeaseRef[]): readonly HeartbeatLease[] {
    if (this.slots.size === 0) return leases;
    let attached: HeartbeatLease[] | undefined;
    leases.forEach((lease, i) => {
      const slot = this.slots.get(`${lease.jobId}:${lease.attempt}`);
      if (!slot?.pending || slot.sending) return;
      attached ??= [...leases];
      attached[i] = { jobId: lease.jobId, attempt: lease.attempt, progress: this.take(slot) };
    });
    return attached ?? leases;
  }

  /** Settles the writes a heartbeat carried: written where renewed, refused where lost, kept for the next beat otherwise. */
  settle(sent: readonly HeartbeatLease[], result: HeartbeatResult | undefined): void {
    if (this.slots.size === 0) return;
    const renewed = new Set(result?.renewed.map((lease) => `${lease.jobId}:${lease.attempt}`));
    const lost = new Set(result?.lost.map((lease) => `${lease.jobId}:${lease.attempt}`));
    for (const lease of sent) {
      if (lease.progress === undefined) continue;
      const key = `${lease.jobId}:${lease.attempt}`;
      const slot = this.slots.get(key);
      const report = slot?.sending;
      if (!slot || !report) continue;
      if (renewed.has(key)) report.waiters.forEach((w) => w.resolve());
      else if (lost.has(key)) this.refuse(lease.jobId, slot, report);
      // Not written (the beat failed, or the row was busy): sent again with the next beat,
      // unless a newer value replaced it, which takes its waiters along.
      else if (slot.pending) slot.pending.waiters.unshift(...report.waiters);
      else slot.pending = report;
      this.landed(slot);
      if (!slot.pending && slot.sent === undefined) this.slots.delete(key);
    }
  }

  /**
   * Ends the attempt's progress, first writing its last unsent value with `send` (a heartbeat of
   * that one lease) after any write in flight, so the job keeps the last thing its handler
   * reported. Called once the handler has returned or thrown, before the outcome is written. Never
   * throws: a write that fails rejects the reports it carried.
   */
  close(jobId: string, attempt: number, send: (lease: HeartbeatLease) => Promise<HeartbeatResult>): Promise<void> | undefined {
    if (this.slots.size === 0 && this.refused.size === 0) return undefined;
    const key = `${jobId}:${attempt}`;
    this.refused.delete(key);
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    return this.flush(jobId, attempt, slot, send).finally(() => {
      this.slots.delete(key);
      this.refused.delete(key);
    });
  }

  private async flush(jobId: string, attempt: number, slot: Slot, send: (lease: HeartbeatLease) => Promise<HeartbeatResult>): Promise<void> {
    if (slot.sent) await slot.sent;
    if (!slot.pending) return;
    const lease: HeartbeatLease = { jobId, attempt, progress: this.take(slot) };
    const report = slot.sending!;
    try {
      const result = await send(lease);
      const held = (l: LeaseRef) => l.jobId === jobId && l.attempt === attempt;
      if (result.renewed.some(held)) report.waiters.forEach((w) => w.resolve());
      else if (result.lost.some(held)) this.refuse(jobId, slot, report);
      else throw new StoreBusyError(`The row of job ${jobId} was busy, so the last progress of attempt ${attempt} was not written.`);
    } catch (error) {
      report.waiters.forEach((w) => w.reject(error as Error));
      this.logger.warn(`the last progress of ${jobId} attempt ${attempt} was not written (${describeError(error)}).`, { jobId, attempt });
    }
    this.landed(slot);
  }

  private take(slot: Slot): unknown {
    const report = slot.pending!;
    slot.pending = undefined;
    slot.sending = report;
    slot.sent = new Promise<void>((resolve) => (slot.release = resolve));
    return report.value;
  }

  private landed(slot: Slot): void {
    slot.sending = undefined;
    slot.release?.();
    slot.release = undefined;
    slot.sent = undefined;
  }

  private refuse(jobId: string, slot: Slot, report: Report): void {
    const error = new ProgressRefusedError(jobId, report.attempt);
    report.waiters.forEach((w) => w.reject(error));
    // Whatever is still pending was reported under the same lost lease.
    slot.pending?.waiters.forEach((w) => w.reject(error));
    slot.pending = undefined;
    const key = `${jobId}:${report.attempt}`;
    if (this.refused.has(key)) return;
    this.refused.add(key);
    this.logger.warn(`progress of ${jobId} attempt ${report.attempt} was refused: this worker no longer holds the lease.`, { jobId, attempt: report.attempt });
  }
}

/** What `report` returns: the value is queued, and no caller can tell two of these apart. */
const ACCEPTED: Promise<void> = Promise.resolve();

function refusal(jobId: string, attempt: number): Promise<void> {
  return handled(Promise.reject(new ProgressRefusedError(jobId, attempt)));
}

/**
 * A handler may report without awaiting: a refusal must not become an unhandled rejection that
 * stops the process. The caller who awaits still sees it.
 */
function handled(promise: Promise<void>): Promise<void> {
  promise.catch(() => undefined);
  return promise;
}
