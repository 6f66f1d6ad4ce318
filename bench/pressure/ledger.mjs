// Per-job bookkeeping of one pressure cell. Job k's enqueue commit time and first handler start sit
// in typed arrays indexed by k (16 bytes a job: 3 MB for the full held run at 800 jobs/s); pickup
// times go to one bounded histogram per phase, the phase in which the job was ENQUEUED, so a phase's
// p99 counts the jobs it left behind even when they start phases later. Rates per window and per
// phase count handler starts by the time they happened, whenever the worker's report arrives.
import { Histogram } from './histogram.mjs';

export class Ledger {
  total = 0; // jobs committed: keys 0 … total − 1
  repeats = 0; // starts of a job already started (at-least-once delivery)
  #pending = []; // starts whose job's commit the producer has not reported yet

  /**
   * plan: { phases: [{ startMs, endMs }], windows: [{ phase, startMs, endMs }] }, times relative to
   * t0, the last phase the drain.
   */
  constructor(plan, t0, expected) {
    this.plan = plan;
    this.t0 = t0;
    this.enqueuedAt = new Float64Array(expected);
    this.startedAt = new Float64Array(expected);
    this.phaseOf = new Uint8Array(expected);
    this.histograms = plan.phases.map(() => new Histogram());
    this.enqueuedIn = plan.phases.map(() => 0);
    this.startedIn = plan.phases.map(() => 0);
    this.windowEnqueued = plan.windows.map(() => 0);
    this.windowStarted = plan.windows.map(() => 0);
  }

  #phaseAt(epoch) {
    const t = epoch - this.t0;
    let i = this.plan.phases.length - 1;
    while (i > 0 && t < this.plan.phases[i].startMs) i--;
    return i;
  }

  /** The window holding `epoch`, or -1 outside them all. */
  #windowAt(epoch) {
    const t = epoch - this.t0;
    const windows = this.plan.windows;
    let lo = 0;
    let hi = windows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (t < windows[mid].startMs) hi = mid - 1;
      else if (t >= windows[mid].endMs) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  #grow(size) {
    if (size <= this.enqueuedAt.length) return;
    const length = Math.max(size, this.enqueuedAt.length * 2);
    for (const key of ['enqueuedAt', 'startedAt', 'phaseOf']) {
      const grown = new this[key].constructor(length);
      grown.set(this[key]);
      this[key] = grown;
    }
  }

  /**
   * The producer's report: jobs k0 … k0 + n − 1 committed at `epoch`. Nothing is offered in the
   * drain, so an addMany still in flight when it began belongs to the last phase that offered.
   */
  committed(k0, n, epoch) {
    this.#grow(k0 + n);
    const phase = Math.min(this.#phaseAt(epoch), this.plan.phases.length - 2);
    this.enqueuedAt.fill(epoch, k0, k0 + n);
    this.phaseOf.fill(phase, k0, k0 + n);
    this.enqueuedIn[phase] += n;
    const w = this.#windowAt(epoch);
    if (w >= 0) this.windowEnqueued[w] += n;
    this.total = Math.max(this.total, k0 + n);
  }

  /** The workers' reports: [k, epochMs] handler starts (drained from workers.starts). */
  started(starts) {
    const retry = this.#pending;
    this.#pending = [];
    for (const s of retry) this.#start(s);
    for (const s of starts) this.#start(s);
  }

  #start(s) {
    const [k, epoch] = s;
    // A job can start before its addMany has returned to the producer (the commit is visible first).
    if (k >= this.total || this.enqueuedAt[k] === 0) return void this.#pending.push(s);
    if (this.startedAt[k] !== 0) return void (this.repeats += 1);
    this.startedAt[k] = epoch;
    this.histograms[this.phaseOf[k]].add(epoch - this.enqueuedAt[k]);
    this.startedIn[this.#phaseAt(epoch)] += 1;
    const w = this.#windowAt(epoch);
    if (w >= 0) this.windowStarted[w] += 1;
  }

  /** Jobs enqueued in phase p that had not started when it ended. */
  leftAtEnd(p) {
    const end = this.t0 + this.plan.phases[p].endMs;
    let left = 0;
    for (let k = 0; k < this.total; k++) if (this.phaseOf[k] === p && (this.startedAt[k] === 0 || this.startedAt[k] > end)) left += 1;
    return left;
  }

  neverStarted() {
    let left = 0;
    for (let k = 0; k < this.total; k++) if (this.startedAt[k] === 0) left += 1;
    return left;
  }
}
