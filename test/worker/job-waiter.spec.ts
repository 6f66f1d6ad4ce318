import { describe, expect, it } from '@jest/globals';
import {
  InvalidArgumentError,
  JobNotFoundError,
  JobWaitAbortedError,
  JobWaiterClosedError,
  JobWaitTimeoutError,
  SchedulerError,
} from '../../lib/core/index.js';
import { MemoryJobStore, type JobStatus, type JobStatusManyParams } from '../../lib/store/index.js';
import { allFinishHints, JobWaiter, NodeEventEmitter, nodeFinishHints, silentLogger, storeFinishHints, type FinishHints } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';
import { track } from '../support/settling.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';

/** A store that answers `running` for every id it is asked about, counting its reads. */
class CountingStore {
  readonly reads: number[] = [];
  failNext = false;
  async jobStatusMany({ jobIds }: JobStatusManyParams): Promise<JobStatus[]> {
    this.reads.push(jobIds.length);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('connection reset');
    }
    return jobIds.map((id) => ({ id, queue: 'default', concurrencyKey: null, uniqueKey: null, scheduleId: null, scheduledFor: new Date(0), state: 'running', attempt: 1, maxAttempts: 3, lastError: null, output: null, finishedAt: null }));
  }
}

/** Hints the test sends by hand, recording when the waiter subscribed and unsubscribed. */
class ManualHints implements FinishHints {
  listener: ((jobId: string | null) => void) | undefined;
  readonly log: string[] = [];
  subscribe(listener: (jobId: string | null) => void): () => void {
    this.log.push('subscribe');
    this.listener = listener;
    return () => {
      this.log.push('unsubscribe');
      this.listener = undefined;
    };
  }
}

function pendingTimers(timers: ManualTimers): number {
  return (timers as unknown as { pending: unknown[] }).pending.length;
}

async function runningJob(store: MemoryJobStore): Promise<string> {
  const { id } = await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
  await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 30_000 });
  return id;
}

describe('JobWaiter', () => {
  it('reads 10,000 waited-on jobs in ten statements per poll, and polls no more often as waiters are added', async () => {
    const timers = new ManualTimers();
    const store = new CountingStore();
    const waiter = new JobWaiter({ store, timers, minPollMs: 100, maxPollMs: 1_000 });
    const ids = Array.from({ length: 10_000 }, (_, n) => `0190a5a0-0000-7000-8000-${n.toString(16).padStart(12, '0')}`);
    const waits = ids.map((id) => waiter.waitFor(id).catch((error: unknown) => error));
    await settle();
    expect(store.reads).toEqual(Array(10).fill(1_000));
    await timers.advance(100);
    expect(store.reads).toHaveLength(20);
    waiter.close();
    expect((await Promise.all(waits)).every((error) => error instanceof JobWaiterClosedError)).toBe(true);
    expect(pendingTimers(timers)).toBe(0);
  });

  it('backs off from minPollMs to maxPollMs, and starts over when a wait begins', async () => {
    const timers = new ManualTimers();
    const store = new CountingStore();
    const waiter = new JobWaiter({ store, timers, minPollMs: 100, maxPollMs: 400 });
    const first = waiter.waitFor(MISSING.replace('f00d', '0001')).catch(() => undefined);
    await settle();
    const readsAt: number[] = [];
    const start = timers.clock.now();
    for (let i = 0; i < 24; i++) {
      const before = store.reads.length;
      await timers.advance(50);
      if (store.reads.length > before) readsAt.push(timers.clock.now() - start);
    }
    // Reads 100, 200 and 400 ms apart, then every 400 ms.
    expect(readsAt).toEqual([100, 300, 700, 1_100]);
    const second = waiter.waitFor(MISSING.replace('f00d', '0002')).catch(() => undefined);
    await settle();
    const reads = store.reads.length;
    await timers.advance(100);
    expect(store.reads.length).toBe(reads + 1);
    waiter.close();
    await Promise.all([first, second]);
  });

  it('does not miss a completion that lands between its first read and the hint: the wait was registered before the read', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const id = await runningJob(store);
    const hints = new ManualHints();
    let releaseFirstRead!: () => void;
    const log: string[] = [];
    const gated = {
      jobStatusMany: async (params: JobStatusManyParams) => {
        log.push('read');
        const statuses = await store.jobStatusMany(params);
        if (log.filter((entry) => entry === 'read').length === 1) await new Promise<void>((resolve) => (releaseFirstRead = resolve));
        return statuses;
      },
    };
    hints.subscribe = ((subscribe) => (listener: (jobId: string | null) => void) => {
      log.push('subscribe');
      return subscribe(listener);
    })(hints.subscribe.bind(hints));
    const waiter = new JobWaiter({ store: gated, timers, hints });
    const wait = track(waiter.waitFor(id));
    await settle();
    // The first read has seen `running` and is held; now the job completes and the hint arrives.
    expect(log).toEqual(['subscribe', 'read']);
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'done' }] });
    hints.listener!(id);
    releaseFirstRead();
    await settle();
    // Resolved by a second read the hint asked for, without any poll interval passing.
    expect(wait.value).toMatchObject({ jobId: id, state: 'succeeded', output: 'done' });
    expect(log).toEqual(['subscribe', 'read', 'read']);
    expect(hints.log).toEqual(['subscribe', 'unsubscribe']);
    expect(pendingTimers(timers)).toBe(0);
  });

  it('reads at once on a hint that some jobs finished, and at most once per minPollMs however many such hints come', async () => {
    const timers = new ManualTimers();
    const store = new CountingStore();
    const hints = new ManualHints();
    const waiter = new JobWaiter({ store, timers, hints, minPollMs: 100, maxPollMs: 10_000 });
    const wait = waiter.waitFor(MISSING).catch((error: unknown) => error);
    await settle();
    expect(store.reads).toHaveLength(1);
    await timers.advance(10);
    hints.listener!(null);
    await settle();
    // The first anonymous hint reads at once.
    expect(store.reads).toHaveLength(2);
    for (let i = 0; i < 50; i++) hints.listener!(null);
    await settle();
    expect(store.reads).toHaveLength(2);
    // Fifty more within the interval cost one read, when the interval ends.
    await timers.advance(99);
    expect(store.reads).toHaveLength(2);
    await timers.advance(1);
    expect(store.reads).toHaveLength(3);
    // The poll went on backing off through the hints (100, 200, 400 ms): they name no job, and a
    // busy cluster sending them all the time must not hold it at minPollMs.
    await timers.advance(399);
    expect(store.reads).toHaveLength(3);
    await timers.advance(1);
    expect(store.reads).toHaveLength(4);
    waiter.close();
    expect(await wait).toBeInstanceOf(JobWaiterClosedError);
    expect(hints.log).toEqual(['subscribe', 'unsubscribe']);
    expect(pendingTimers(timers)).toBe(0);
  });

  it('storeFinishHints opens the store subscription with the first wait and closes it with the last; allFinishHints joins sources', async () => {
    const log: string[] = [];
    let storeListener: (() => void) | undefined;
    const store = {
      subscribeFinishHints: async ({ listener }: { listener: () => void }) => {
        log.push('open');
        storeListener = listener;
        return { close: async () => void log.push('close') };
      },
    };
    const local = new ManualHints();
    const seen: (string | null)[] = [];
    const unsubscribe = allFinishHints(local, storeFinishHints(store)).subscribe((jobId) => seen.push(jobId));
    await settle();
    local.listener!('a');
    storeListener!();
    expect(seen).toEqual(['a', null]);
    unsubscribe();
    await settle();
    // A hint racing the close is dropped, not passed to a listener that left.
    storeListener!();
    expect(seen).toEqual(['a', null]);
    expect(log).toEqual(['open', 'close']);
    expect(local.log).toEqual(['subscribe', 'unsubscribe']);
  });

  it('falls back to polling when no hint comes, and keeps waiting through a failed read', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const id = await runningJob(store);
    const reads: number[] = [];
    const flaky = {
      jobStatusMany: async (params: JobStatusManyParams) => {
        reads.push(reads.length);
        if (reads.length === 2) throw new Error('connection reset');
        return store.jobStatusMany(params);
      },
    };
    const waiter = new JobWaiter({ store: flaky, timers, minPollMs: 100 });
    const wait = track(waiter.waitFor(id));
    await settle();
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] });
    await timers.advance(100);
    expect(wait.settled).toBe(false);
    await timers.advance(200);
    expect(wait.value).toMatchObject({ jobId: id, state: 'succeeded', output: null });
    expect(reads).toHaveLength(3);
  });

  it('times out after timeoutMs, leaving other waits on the same job alone', async () => {
    const timers = new ManualTimers();
    const store = new CountingStore();
    const waiter = new JobWaiter({ store, timers });
    const short = track(waiter.waitFor(MISSING, { timeoutMs: 500 }));
    const long = track(waiter.waitFor(MISSING));
    await timers.advance(499);
    expect(short.settled).toBe(false);
    await timers.advance(1);
    expect(short.error).toBeInstanceOf(JobWaitTimeoutError);
    expect((short.error as Error).message).toBe(`Job ${MISSING} did not finish within 500 ms; it was left as it is.`);
    expect(long.settled).toBe(false);
    expect(waiter.pending).toBe(1);
    waiter.close();
    await settle();
    expect(long.error).toBeInstanceOf(JobWaiterClosedError);
    expect(pendingTimers(timers)).toBe(0);
  });

  it('honours an abort signal: an aborted one rejects at once without a read, a later abort ends the wait', async () => {
    const timers = new ManualTimers();
    const store = new CountingStore();
    const waiter = new JobWaiter({ store, timers });
    const early = new AbortController();
    early.abort(new Error('user left'));
    await expect(waiter.waitFor(MISSING, { signal: early.signal })).rejects.toBeInstanceOf(JobWaitAbortedError);
    await settle();
    expect(store.reads).toEqual([]);
    const later = new AbortController();
    const wait = track(waiter.waitFor(MISSING, { signal: later.signal, timeoutMs: 10_000 }));
    await settle();
    later.abort('navigated away');
    await settle();
    expect(wait.error).toBeInstanceOf(JobWaitAbortedError);
    expect((wait.error as Error).cause).toBe('navigated away');
    expect(waiter.pending).toBe(0);
    expect(pendingTimers(timers)).toBe(0);
  });

  it('refuses bad arguments with one typed sentence, before reading anything', async () => {
    const store = new CountingStore();
    const waiter = new JobWaiter({ store, timers: new ManualTimers() });
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => waiter.waitFor('nope'), 'jobId must be a UUID, got "nope".'],
      [() => waiter.waitFor(MISSING, { timeoutMs: 0 }), 'timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 0.'],
      [() => waiter.waitFor(MISSING, { timeoutMs: 1.5 }), 'timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 1.5.'],
      [() => waiter.waitFor(MISSING, { signal: {} as AbortSignal }), "signal must be an AbortSignal, such as an AbortController's signal."],
      [() => waiter.waitFor(MISSING, null as never), 'options must be an object, got null.'],
    ];
    for (const [call, message] of cases) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(SchedulerError);
      expect((error as Error).message).toBe(message);
    }
    await settle();
    expect(store.reads).toEqual([]);
  });

  it('rejects an unknown id with JobNotFoundError, and every wait once closed', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const hints = new ManualHints();
    const waiter = new JobWaiter({ store, timers, hints });
    await expect(waiter.waitFor(MISSING)).rejects.toBeInstanceOf(JobNotFoundError);
    const id = await runningJob(store);
    const wait = track(waiter.waitFor(id));
    await settle();
    waiter.close();
    await settle();
    expect(wait.error).toBeInstanceOf(JobWaiterClosedError);
    await expect(waiter.waitFor(id)).rejects.toBeInstanceOf(JobWaiterClosedError);
    expect(hints.log.at(-1)).toBe('unsubscribe');
    expect(pendingTimers(timers)).toBe(0);
  });

  it('nodeFinishHints passes on applied terminal outcomes only', () => {
    const events = new NodeEventEmitter(silentLogger);
    const seen: (string | null)[] = [];
    const unsubscribe = nodeFinishHints(events).subscribe((jobId) => seen.push(jobId));
    const base = { attempt: 1, name: 'n', queue: 'q', kind: 'succeeded' as const, durationMs: 1 };
    events.publish('settled', { ...base, jobId: 'a', status: 'applied', state: 'succeeded' });
    events.publish('settled', { ...base, jobId: 'b', status: 'applied', state: 'scheduled' });
    events.publish('settled', { ...base, jobId: 'c', status: 'stale' });
    events.publish('settled', { ...base, jobId: 'd', status: 'applied', state: 'dead_lettered' });
    unsubscribe();
    events.publish('settled', { ...base, jobId: 'e', status: 'applied', state: 'succeeded' });
    expect(seen).toEqual(['a', 'd']);
    expect(events.listenerCount('settled')).toBe(0);
  });
});
