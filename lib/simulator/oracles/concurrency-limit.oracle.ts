import type { RowView, SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

type Call = Extract<SimEvent, { type: 'call' }>;

/**
 * No concurrency key ever has more live leases than its cap. Checked after every call on the
 * store's own rows; also counts the claims that left a key exactly at its cap (saturations), to
 * show the limit was actually exercised.
 *
 * The cap follows the run's history, read from the calls that changed it: the caps the workload's
 * jobs declare (in force from the start, or from the next declaring enqueue after a removal) and
 * the operator's `concurrencyLimitSet` calls (set, lower, raise, remove). A cap lowered below the
 * leases already live does not end them, so a key may stay above its cap for a while; what it may
 * never do is grant a lease while above it. So a key over its cap is a violation as soon as one
 * of its live leases was granted after the cap last changed. With no change during a run, every
 * lease was, and the check is the plain count against the cap.
 */
export class ConcurrencyLimitOracle extends Oracle {
  readonly name = 'concurrency_limit';
  private readonly running = new Map<string, RowView>();
  /** When each live lease was granted, as an event number. */
  private readonly grantedAt = new Map<string, number>();
  private readonly caps: Map<string, number>;
  /** When each key's cap last changed, as an event number (absent: never, since the start). */
  private readonly changedAt = new Map<string, number>();
  private seq = 0;
  saturations = 0;
  /** Cap changes made while the key had live leases: those the jobs already running must count against. */
  changesWhileRunning = 0;

  constructor(caps: ReadonlyMap<string, number>) {
    super();
    this.caps = new Map(caps);
  }

  onEvent(event: SimEvent): void {
    this.seq += 1;
    if (event.type === 'write') {
      const { after, before } = event;
      if (after.state === 'running' && after.concurrencyKey !== null) {
        if (before?.state !== 'running' || before.attempt !== after.attempt) this.grantedAt.set(after.id, this.seq);
        this.running.set(after.id, after);
      } else {
        this.running.delete(after.id);
        this.grantedAt.delete(after.id);
      }
      return;
    }
    if (event.type !== 'call' || event.error !== null) return;
    if (event.op === 'concurrencyLimitSet') this.limitSet(event);
    else if (event.op === 'jobEnqueueMany') this.declared(event);
    else if (event.op === 'jobClaim') this.check(event.at);
  }

  private check(at: number): void {
    const live = new Map<string, RowView[]>();
    for (const row of this.running.values()) {
      if (row.leasedUntil !== null && row.leasedUntil > at) live.set(row.concurrencyKey!, [...(live.get(row.concurrencyKey!) ?? []), row]);
    }
    for (const [key, rows] of live) {
      const cap = this.caps.get(key);
      if (cap === undefined) continue;
      const since = this.changedAt.get(key) ?? 0;
      if (rows.length > cap && rows.some((row) => this.grantedAt.get(row.id)! > since)) {
        this.flag(`${rows.length} live leases on key ${key} (cap ${cap}) after a claim at ${at}`);
      } else if (rows.length === cap) this.saturations += 1;
    }
  }

  private limitSet(call: Call): void {
    const [{ target, max }] = call.args as [{ target: { key?: string }; max: number | null }];
    if (target.key === undefined) return;
    if (max === null) this.caps.delete(target.key);
    else this.caps.set(target.key, max);
    this.changedAt.set(target.key, this.seq);
    if ([...this.running.values()].some((row) => row.concurrencyKey === target.key && row.leasedUntil !== null && row.leasedUntil > call.at)) this.changesWhileRunning += 1;
  }

  /** A job the store wrote declares its key's cap when the key has none (the first one stands). */
  private declared(call: Call): void {
    const inputs = call.args as { id: string; concurrencyKey: string | null; concurrencyLimit?: number | null }[];
    const created = new Set((call.result as { id: string; created: boolean }[]).filter((r) => r.created).map((r) => r.id));
    for (const input of inputs) {
      if (!created.has(input.id) || input.concurrencyKey === null || !input.concurrencyLimit || this.caps.has(input.concurrencyKey)) continue;
      this.caps.set(input.concurrencyKey, input.concurrencyLimit);
      this.changedAt.set(input.concurrencyKey, this.seq);
    }
  }
}
