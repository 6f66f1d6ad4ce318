import type { Caller, RowView, SimEvent, SimListener } from '../../lib/simulator/index.js';

/** Builds hand-written histories for the oracle tests: rows, writes and the calls that close them. */
export const T0 = 1_000_000;

export function row(overrides: Partial<RowView> = {}): RowView {
  return {
    id: 'job-1',
    name: 'sim.work',
    queue: 'default',
    state: 'scheduled',
    attempt: 0,
    maxAttempts: 3,
    snoozes: 0,
    workerId: null,
    leasedUntil: null,
    runAt: T0,
    priority: 0,
    cancelRequested: false,
    scheduleId: null,
    scheduledFor: T0,
    concurrencyKey: null,
    uniqueKey: null,
    pendingParents: 0,
    lastError: null,
    progress: null,
    ...overrides,
  };
}

export const worker = (workerId: string): Caller => ({ kind: 'worker', workerId });

export function write(before: RowView | undefined, after: RowView, at = T0): SimEvent {
  return { type: 'write', at, before, after };
}

export function call(op: string, caller: Caller, args: unknown, result: unknown = null, at = T0): SimEvent {
  return { type: 'call', at, caller, op, args, result, error: null };
}

export function feed(listener: SimListener, events: readonly SimEvent[]): void {
  for (const event of events) listener.onEvent(event);
}

/** A job running attempt 1 under worker `w1`, leased until T0 + 5 s. */
export const running = (overrides: Partial<RowView> = {}) => row({ state: 'running', attempt: 1, workerId: 'w1', leasedUntil: T0 + 5_000, ...overrides });

export const complete = (workerId: string, jobId: string, attempt: number, at = T0) =>
  call('jobCompleteMany', worker(workerId), { workerId, outcomes: [{ jobId, attempt, kind: 'succeeded' }] }, [{ jobId, attempt, status: 'applied', state: 'succeeded' }], at);
