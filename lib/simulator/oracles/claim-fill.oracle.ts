import type { RowView, SimEvent } from '../sim-event.js';
import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

type ClaimArgs = readonly [{ readonly limit: number; readonly queues: readonly string[] }];

/**
 * A claim fills its free slots from the due jobs that no limit holds back. After each worker's
 * claim that took fewer jobs than it asked for, no job may be left that it could have taken: a
 * scheduled, due job of a queue it asked for, with attempts left, that no limit holds back once the
 * claim's own picks are counted. A job is held back when its key's cap (as the run's calls set it)
 * has as many live leases as it allows; one under a rate limit is left out of the check, since its
 * room depends on the window's history, which the rate_limit oracle judges. So a hot key at its
 * cap, with any backlog, must never keep a claim from the jobs behind it.
 */
export class ClaimFillOracle extends PerCallOracle {
  readonly name = 'claim_fill';
  private readonly rows = new Map<string, RowView>();
  private readonly caps: Map<string, number>;
  /** Keys and queues that a rate limit has covered at some point in the run. */
  private readonly rated = new Set<string>();
  /** Claims that came back short while some job was held back: the case this oracle exists for. */
  shortBesideHeld = 0;

  constructor(caps: ReadonlyMap<string, number>) {
    super();
    this.caps = new Map(caps);
  }

  override onEvent(event: SimEvent): void {
    if (event.type === 'call' && event.error === null) {
      if (event.op === 'concurrencyLimitSet') this.limitSet(event);
      else if (event.op === 'rateLimitSet') this.rateSet(event);
      else if (event.op === 'jobEnqueueMany') this.declared(event);
    }
    super.onEvent(event);
  }

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const write of writes) this.rows.set(write.after.id, write.after);
    if (call.op !== 'jobClaim' || call.error || !workerOf(call)) return;
    const [{ limit, queues }] = call.args as ClaimArgs;
    const taken = (call.result as readonly unknown[]).length;
    if (taken >= limit) return;
    const asked = new Set(queues);
    const live = new Map<string, number>();
    let held = false;
    for (const row of this.rows.values()) {
      if (row.state === 'running' && row.concurrencyKey !== null && row.leasedUntil !== null && row.leasedUntil > call.at) {
        live.set(row.concurrencyKey, (live.get(row.concurrencyKey) ?? 0) + 1);
      }
    }
    for (const row of this.rows.values()) {
      if (row.state !== 'scheduled' || row.runAt > call.at || row.attempt >= row.maxAttempts || !asked.has(row.queue)) continue;
      if (this.rated.has(`queue:${row.queue}`) || (row.concurrencyKey !== null && this.rated.has(`key:${row.concurrencyKey}`))) continue;
      const cap = row.concurrencyKey === null ? undefined : this.caps.get(row.concurrencyKey);
      if (cap !== undefined && (live.get(row.concurrencyKey!) ?? 0) >= cap) {
        held = true;
        continue;
      }
      this.flag(`a claim at ${call.at} asked for ${limit} jobs and took ${taken}, leaving ${row.id} due since ${row.runAt}, held back by no limit`);
      return;
    }
    if (held) this.shortBesideHeld += 1;
  }

  private limitSet(call: CallEvent): void {
    const [{ target, max }] = call.args as [{ target: { key?: string }; max: number | null }];
    if (target.key === undefined) return;
    if (max === null) this.caps.delete(target.key);
    else this.caps.set(target.key, max);
  }

  private rateSet(call: CallEvent): void {
    const [{ target }] = call.args as [{ target: { key?: string; queue?: string } }];
    this.rated.add(target.key !== undefined ? `key:${target.key}` : `queue:${target.queue}`);
  }

  /** A job the store wrote declares its key's cap when the key has none (the first one stands), and its rate. */
  private declared(call: CallEvent): void {
    const inputs = call.args as { id: string; concurrencyKey: string | null; concurrencyLimit?: number | null; rateLimit?: unknown }[];
    const created = new Set((call.result as { id: string; created: boolean }[]).filter((r) => r.created).map((r) => r.id));
    for (const input of inputs) {
      if (!created.has(input.id) || input.concurrencyKey === null) continue;
      if (input.rateLimit) this.rated.add(`key:${input.concurrencyKey}`);
      if (input.concurrencyLimit && !this.caps.has(input.concurrencyKey)) this.caps.set(input.concurrencyKey, input.concurrencyLimit);
    }
  }
}
