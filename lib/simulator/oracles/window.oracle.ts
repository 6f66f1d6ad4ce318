import { DEFAULT_DEBOUNCE_WINDOWS, MAX_WINDOW_MS, type DebounceOptions, type EnqueueResult, type ThrottleOptions } from '../../store/index.js';
import type { RowView, RowWindow, SimEvent } from '../sim-event.js';
import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

/** An enqueue as the gateway logs it: its id and, when it carries one, its window. */
interface LoggedInput {
  readonly id: string;
  /** Logged with a window only. */
  readonly name?: string;
  readonly debounce?: DebounceOptions;
  readonly throttle?: ThrottleOptions;
}

/** A claimed job as the gateway logs it; `from` names the enqueue whose payload it was claimed with (SimPayload.from). */
interface LoggedClaim {
  readonly jobId: string;
  readonly attempt: number;
  readonly from?: string;
}

type ExecEvent = Extract<SimEvent, { type: 'exec' }>;

/** The lookup key of a (window kind, wire name, window key), as the store scopes windows. */
function slotOf(name: string, window: RowWindow): string {
  return JSON.stringify([window.kind, name, window.key]);
}

/** True when a job has not started: the state a debounce's holder is in (scheduled, attempt 0). */
function notStarted(row: RowView): boolean {
  return row.state === 'scheduled' && row.attempt === 0;
}

function sameWindow(a: RowWindow | undefined, b: RowWindow | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.kind === b.kind && a.key === b.key && a.endsAt === b.endsAt);
}

/**
 * Debounce and throttle windows do what they say, judged from the rows as stored, the enqueues'
 * arguments and what the store answered them:
 *
 * - throttle: a job that opens a throttle window is written only when no earlier window of its
 *   (name, key) is still open at its insert, with its window ending `windowMs` after it; an
 *   enqueue answered `throttled` writes no job and names a job whose window of that key was open;
 * - debounce: a job that opens a debounce window is due `windowMs` after its insert and its
 *   window ends `maxDelayMs` (default ten windows) after it; no write, an operator's replay
 *   included, leaves two jobs of one (name, key) that have not started (scheduled, attempt 0); an
 *   enqueue answered `debounced` writes no job and rewrites a job of its key that had not
 *   started, due `windowMs` from then but never past its window's end; no write other than a
 *   replay (which makes the job due at once) sets such a job's run time past its window's end; a
 *   claim hands the job the payload of the last enqueue that reached it (SimPayload.from), and
 *   the handler runs with what its claim handed it;
 * - a window never changes once its job is written.
 *
 * Rewrites capped at a window's end and throttle windows opened again after one closed are
 * counted as coverage.
 */
export class WindowOracle extends PerCallOracle {
  readonly name = 'windows_hold';
  /** Debounce rewrites whose run time the window's end cut short. */
  debouncesCapped = 0;
  /** Throttle jobs written for a key whose earlier window had closed. */
  throttleWindowsReopened = 0;
  /** The window of every job that opened one, with its wire name. */
  private readonly windows = new Map<string, { readonly name: string; readonly window: RowWindow }>();
  /** The latest-ending throttle window of each slot. */
  private readonly throttles = new Map<string, { readonly id: string; readonly endsAt: number }>();
  /** The debounced jobs of each slot that have not started, and the slot of each. */
  private readonly waiting = new Map<string, Set<string>>();
  private readonly waitingIn = new Map<string, string>();
  /** The enqueue whose payload each windowed job holds. */
  private readonly payloadFrom = new Map<string, string>();
  /** The payload each (worker, job, attempt) was claimed with. */
  private readonly claimedWith = new Map<string, string>();

  override onEvent(event: SimEvent): void {
    if (event.type === 'exec') this.onExec(event);
    else super.onEvent(event);
  }

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const write of writes) this.onWrite(call, write);
    if (call.error !== null) return;
    if (call.op === 'jobEnqueueMany' && Array.isArray(call.result)) this.onEnqueue(call, writes);
    if (call.op === 'jobClaim' && Array.isArray(call.result)) this.onClaim(call);
  }

  private onWrite(call: CallEvent, { at, before, after }: WriteEvent): void {
    if (before && !sameWindow(before.window, after.window)) this.flag(`${call.op} changed the window of ${after.id} from ${JSON.stringify(before.window ?? null)} to ${JSON.stringify(after.window ?? null)}`);
    const window = after.window;
    if (window === undefined) return;
    if (!before) {
      this.windows.set(after.id, { name: after.name, window });
      if (window.kind === 'throttle') this.opened(after, window, at);
    }
    if (window.kind !== 'debounce') return;
    const slot = slotOf(after.name, window);
    const isWaiting = notStarted(after);
    const wasWaiting = this.waitingIn.has(after.id);
    if (isWaiting && !wasWaiting) {
      const others = this.waiting.get(slot) ?? new Set<string>();
      // An enqueue, or a replay: the store refuses a replay that would leave two.
      if (others.size > 0) this.flag(`${call.op} left ${after.id} waiting on ${slot} beside ${[...others].join(', ')}, which had not started either`);
      others.add(after.id);
      this.waiting.set(slot, others);
      this.waitingIn.set(after.id, slot);
    } else if (!isWaiting && wasWaiting) {
      this.waiting.get(slot)?.delete(after.id);
      this.waitingIn.delete(after.id);
    }
    // A replay makes the job due at once, past its window's end or not.
    const runAtSet = !before || before.runAt !== after.runAt;
    if (isWaiting && runAtSet && call.op !== 'jobReplay' && after.runAt > window.endsAt) {
      this.flag(`${call.op} made ${after.id} due ${after.runAt - window.endsAt} ms after its debounce window ends`);
    }
  }

  /** A throttle job was written: no earlier window of its slot may still be open. */
  private opened(row: RowView, window: RowWindow, at: number): void {
    const slot = slotOf(row.name, window);
    const earlier = this.throttles.get(slot);
    if (earlier !== undefined && earlier.endsAt > at) this.flag(`${row.id} opened a throttle window on ${slot} while ${earlier.id}'s was open for ${earlier.endsAt - at} ms more`);
    else if (earlier !== undefined) this.throttleWindowsReopened += 1;
    if (earlier === undefined || window.endsAt > earlier.endsAt) this.throttles.set(slot, { id: row.id, endsAt: window.endsAt });
  }

  private onEnqueue(call: CallEvent, writes: readonly WriteEvent[]): void {
    const inputs = call.args as readonly LoggedInput[];
    const results = call.result as readonly EnqueueResult[];
    const inserts = new Map(writes.filter((w) => w.before === undefined).map((w) => [w.after.id, w]));
    const lastWrite = new Map(writes.map((w) => [w.after.id, w]));
    /** The last debounced enqueue of the call that reached each stored holder. */
    const rewrites = new Map<string, LoggedInput>();
    inputs.forEach((input, i) => {
      const result = results[i];
      if (result === undefined || (input.debounce === undefined && input.throttle === undefined)) return;
      if (result.created) {
        const insert = inserts.get(input.id);
        if (insert) this.checkInsert(input, insert);
        this.payloadFrom.set(input.id, input.id);
        return;
      }
      if (result.deduplicated !== 'debounced' && result.deduplicated !== 'throttled') return;
      if (inserts.has(input.id)) this.flag(`enqueue ${input.id} was answered ${result.deduplicated} but wrote a job of its own`);
      if (result.deduplicated === 'throttled') return this.checkThrottled(call, input, result.id);
      if (input.debounce === undefined) return this.flag(`enqueue ${input.id} was answered debounced but carries no debounce`);
      const holder = lastWrite.get(result.id);
      if (holder === undefined) return this.flag(`enqueue ${input.id} was debounced into ${result.id}, which it did not write`);
      const window = holder.after.window;
      if (window?.kind !== 'debounce' || window.key !== input.debounce.key || holder.after.name !== input.name) return this.flag(`enqueue ${input.id} was debounced into ${result.id}, which holds no debounce window of key ${input.debounce.key}`);
      if (holder.before !== undefined) rewrites.set(result.id, input);
      this.payloadFrom.set(result.id, input.id);
    });
    for (const [holderId, input] of rewrites) this.checkRewrite(input, lastWrite.get(holderId)!);
  }

  /** A job written with a window: the window and run time its enqueue asked for, from the store's clock at the insert. */
  private checkInsert(input: LoggedInput, { at, after }: WriteEvent): void {
    const { window } = after;
    if (input.debounce) {
      const { key, windowMs, maxDelayMs } = input.debounce;
      const endsAt = at + (maxDelayMs ?? Math.min(windowMs * DEFAULT_DEBOUNCE_WINDOWS, MAX_WINDOW_MS));
      if (window?.kind !== 'debounce' || window.key !== key || window.endsAt !== endsAt) this.flag(`${after.id} was written with the window ${JSON.stringify(window ?? null)} for a debounce of key ${key} ending at +${endsAt - at} ms`);
      if (after.runAt !== at + windowMs) this.flag(`debounced ${after.id} was written due at +${after.runAt - at} ms, not after its window of ${windowMs} ms`);
    } else if (input.throttle) {
      const { key, windowMs } = input.throttle;
      if (window?.kind !== 'throttle' || window.key !== key || window.endsAt !== at + windowMs) this.flag(`${after.id} was written with the window ${JSON.stringify(window ?? null)} for a throttle of key ${key} and ${windowMs} ms`);
    }
  }

  /** A debounce rewrote a stored holder: one that had not started, now due a window from now, but not past the window's end. */
  private checkRewrite(input: LoggedInput, { at, before, after }: WriteEvent): void {
    const was = before!;
    if (!notStarted(was)) this.flag(`enqueue ${input.id} was debounced into ${after.id}, which had started (${was.state}, attempt ${was.attempt})`);
    const endsAt = after.window!.endsAt;
    const wanted = at + input.debounce!.windowMs;
    if (wanted > endsAt) this.debouncesCapped += 1;
    if (after.runAt !== Math.min(wanted, endsAt)) {
      this.flag(`enqueue ${input.id} made ${after.id} due at +${after.runAt - at} ms, not at the earlier of its window (+${wanted - at} ms) and its window's end (+${endsAt - at} ms)`);
    }
  }

  /** A throttled enqueue names a job whose window of its key was open. */
  private checkThrottled(call: CallEvent, input: LoggedInput, openerId: string): void {
    if (input.throttle === undefined) return this.flag(`enqueue ${input.id} was answered throttled but carries no throttle`);
    const held = this.windows.get(openerId);
    const opener = held !== undefined && held.name === input.name ? held.window : undefined;
    if (opener?.kind !== 'throttle' || opener.key !== input.throttle.key) return this.flag(`enqueue ${input.id} was throttled by ${openerId}, which opened no throttle window of key ${input.throttle.key}`);
    if (opener.endsAt <= call.at) this.flag(`enqueue ${input.id} was throttled by ${openerId}, whose window closed ${call.at - opener.endsAt} ms before`);
  }

  /** A claim hands each windowed job the payload of the last enqueue that reached it. */
  private onClaim(call: CallEvent): void {
    const workerId = workerOf(call);
    for (const { jobId, attempt, from } of call.result as readonly LoggedClaim[]) {
      if (from === undefined) continue;
      const expected = this.payloadFrom.get(jobId) ?? jobId;
      if (from !== expected) this.flag(`${workerId} claimed ${jobId} attempt ${attempt} with the payload of enqueue ${from}, not of ${expected}, the last that reached it`);
      this.claimedWith.set(`${workerId}|${jobId}|${attempt}`, from);
    }
  }

  private onExec({ workerId, jobId, attempt, phase, from }: ExecEvent): void {
    if (phase !== 'start' || from === undefined) return;
    const claimed = this.claimedWith.get(`${workerId}|${jobId}|${attempt}`);
    if (claimed !== undefined && claimed !== from) this.flag(`${workerId} ran ${jobId} attempt ${attempt} with the payload of enqueue ${from}, claimed with that of ${claimed}`);
  }
}
