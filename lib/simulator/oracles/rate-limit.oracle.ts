import type { Rate } from '../../store/index.js';
import type { RowView, SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

type Call = Extract<SimEvent, { type: 'call' }>;

/**
 * A rate limit as the run's calls made it: its rate, and the starts it counts, oldest first. It
 * counts at most `max` of them, the most recent: a start beyond them, or one a lowered max dropped,
 * is forgotten, as the contract says.
 */
interface Limit {
  rate: Rate;
  counted: number[];
}

/** The limit keys a job falls under, as the stores name them. */
function targetsOf(row: RowView): string[] {
  return row.concurrencyKey === null ? [`queue:${row.queue}`] : [`queue:${row.queue}`, `key:${row.concurrencyKey}`];
}

/**
 * No window of `perMs`, by the store's clock, holds more than `max` of the starts a rate-limited
 * queue or key counts. A start is a claim that leased one of its jobs (a lapsed lease's reclaim
 * included), whatever the attempt did next, a crash included. Checked at each start, over the window
 * that ends at it: the start is one too many when that window already holds `max` counted starts,
 * exactly when the store's bookkeeping (`lib/store/rate-window.ts`) has no free start.
 *
 * The limits follow the run's history, read from the calls that made them: the rate the workload's
 * keyed jobs declare (in force from the first enqueue that declares it, and again from the next one
 * after a removal), and the operator's `rateLimitSet` calls. What a limit counts is the contract's:
 * a new limit counts the starts made from then on; a limit counts its `max` most recent starts; a
 * changed one keeps those (lowered, the most recent `max` of them) and applies its new window to
 * them; a removed one counts nothing. So no window that begins after a limit was last set holds
 * more than `max` starts; one that straddles a raise of `max` with a longer window may also hold
 * starts the lower max had stopped counting (see docs/simulator.md). Also counts the starts that
 * used a target's last free start (saturations), to show the limits were exercised.
 */
export class RateLimitOracle extends Oracle {
  readonly name = 'rate_limit';
  private readonly limits = new Map<string, Limit>();
  saturations = 0;

  onEvent(event: SimEvent): void {
    if (event.type === 'write') {
      const { before, after } = event;
      if (after.state !== 'running' || (before?.state === 'running' && before.attempt === after.attempt)) return;
      for (const target of targetsOf(after)) this.started(target, event.at);
      return;
    }
    if (event.type !== 'call' || event.error !== null) return;
    if (event.op === 'rateLimitSet') this.limitSet(event);
    else if (event.op === 'jobEnqueueMany') this.declared(event);
  }

  /** A start at `at`: the counted starts in the window that ends there, this one included, must be at most max. */
  private started(target: string, at: number): void {
    const limit = this.limits.get(target);
    if (!limit) return;
    const { max, perMs } = limit.rate;
    const inWindow = limit.counted.filter((time) => time > at - perMs).length + 1;
    if (inWindow > max) this.flag(`${inWindow} starts on ${target} in the ${perMs} ms up to ${at} (max ${max})`);
    else if (inWindow === max) this.saturations += 1;
    limit.counted.push(at);
    if (limit.counted.length > max) limit.counted.shift();
  }

  private limitSet(call: Call): void {
    const [{ target, rate }] = call.args as [{ target: { key?: string; queue?: string }; rate: Rate | null }];
    const key = target.key !== undefined ? `key:${target.key}` : `queue:${target.queue}`;
    const held = this.limits.get(key);
    if (rate === null) this.limits.delete(key);
    else if (!held) this.create(key, rate);
    else {
      held.rate = { max: rate.max, perMs: rate.perMs };
      held.counted = held.counted.slice(-rate.max);
    }
  }

  /** A job the store wrote declares its key's rate when the key has none (the first one stands). */
  private declared(call: Call): void {
    const inputs = call.args as { id: string; concurrencyKey: string | null; rateLimit?: Rate }[];
    const created = new Set((call.result as { id: string; created: boolean }[]).filter((r) => r.created).map((r) => r.id));
    for (const input of inputs) {
      if (!created.has(input.id) || input.concurrencyKey === null || !input.rateLimit || this.limits.has(`key:${input.concurrencyKey}`)) continue;
      this.create(`key:${input.concurrencyKey}`, input.rateLimit);
    }
  }

  private create(key: string, rate: Rate): void {
    this.limits.set(key, { rate: { max: rate.max, perMs: rate.perMs }, counted: [] });
  }
}
