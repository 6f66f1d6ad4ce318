import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/core/index.js';
import type { JobStore } from '../../lib/store/index.js';
import { ManualClock, ManualTimers, MemoryJobStore } from '../../lib/testing/index.js';
import { checkScheduledVerifyOptions, readVerifyRuns, recordVerifyRun, ScheduledVerify, verifyHistory, type ScheduledVerifyOptions } from '../../lib/verify/index.js';
import type { SchedulerLogger } from '../../lib/worker/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A logger that keeps what it was told, by level. */
function recordingLogger() {
  const lines: string[] = [];
  const logger: SchedulerLogger = {
    log: (m) => lines.push(`log ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
  return { logger, lines };
}

function node(store: JobStore, clock: ManualClock, workerId: string, options: Required<ScheduledVerifyOptions> = { everyMs: HOUR, windowMs: HOUR }, timers?: ManualTimers) {
  const { logger, lines } = recordingLogger();
  const verify = new ScheduledVerify(store, { ...options, workerId, logger, now: () => clock.now(), ...(timers ? { timers } : {}) });
  return { verify, lines };
}

describe('issue 40: the scheduled verify', () => {
  it('runs on one node at a time, once per everyMs, over the last windowMs, and records each report', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    const a = node(store, clock, 'node-a', { everyMs: HOUR, windowMs: 2 * HOUR });
    const b = node(store, clock, 'node-b', { everyMs: HOUR, windowMs: 2 * HOUR });
    expect(await a.verify.look()).toBe('verified');
    expect(await b.verify.look()).toBe('not_holder');
    clock.advance(HOUR - 1);
    expect(await a.verify.look()).toBe('not_due');
    clock.advance(1);
    expect(await a.verify.look()).toBe('verified');
    const runs = await readVerifyRuns(store);
    expect(runs.map((r) => [r.actor, r.at.getTime(), r.since!.getTime(), r.until, r.checked.entries, r.violationCount])).toEqual([
      // The second starts five minutes before the first did, so differing clocks leave no gap between them.
      ['scheduled', clock.now(), clock.now() - HOUR - 5 * MINUTE, null, 1, 0],
      ['scheduled', clock.now() - HOUR, clock.now() - 3 * HOUR, null, 1, 0],
    ]);
    expect(a.lines).toEqual([
      'log the scheduled verify checked 1 history entries of 1 jobs: no promise was broken.',
      'log the scheduled verify checked 1 history entries of 1 jobs: no promise was broken.',
    ]);
    // node-a stops looking: its lease lapses after three looks' time, and node-b takes over, on the same pace.
    clock.advance(3 * 5 * MINUTE);
    expect(await b.verify.look()).toBe('not_due');
    clock.advance(HOUR - 15 * MINUTE);
    expect(await b.verify.look()).toBe('verified');
    expect((await readVerifyRuns(store)).length).toBe(3);
  });

  it('logs a broken promise as an error naming where to read it', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const { id } = await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    // A row deleted under its history: a lost job.
    (store as unknown as { tables: { jobs: Map<string, unknown> } }).tables.jobs.delete(id);
    const a = node(store, clock, 'node-a');
    expect(await a.verify.look()).toBe('verified');
    expect(a.lines).toEqual([
      "error the scheduled verify found 1 broken promise in 1 history entries of 1 jobs; the dashboard's Guarantees page and `durable-scheduler verify` name them.",
    ]);
    const [run] = await readVerifyRuns(store);
    expect(run!.violations.map((v) => [v.rule, v.jobId])).toEqual([['lost_job', id]]);
  });

  it('looks on its timers from start and again each everyMs (five minutes at most), and a stop ends a run under way before its next read without recording it', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    let recorded = 0;
    let scanned!: () => void;
    let release!: () => void;
    const scanning = new Promise<void>((resolve) => (scanned = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    let hold = false;
    // Test signals: each record, and a scan that waits while `hold` is on.
    const watched = Object.create(store, {
      auditAppend: { value: async (params: Parameters<JobStore['auditAppend']>[0]) => (await store.auditAppend(params), void (recorded += 1)) },
      historyScan: {
        value: async (params: Parameters<JobStore['historyScan']>[0]) => {
          if (hold) {
            scanned();
            await held;
          }
          return store.historyScan(params);
        },
      },
    }) as JobStore;
    const a = node(watched, timers.clock, 'node-a', { everyMs: MINUTE, windowMs: MINUTE }, timers);
    a.verify.start();
    await timers.advance(0);
    await waitFor(() => recorded === 1);
    await timers.advance(MINUTE);
    await waitFor(() => recorded === 2);
    hold = true;
    await timers.advance(MINUTE);
    await scanning;
    const stopping = a.verify.stop();
    release();
    await stopping;
    expect(recorded).toBe(2);
    expect(timers.size).toBe(0);
    expect(a.lines.filter((l) => !l.startsWith('log'))).toEqual([]);
  });

  it('paces on scheduled runs only: a run the CLI records neither delays nor replaces one', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const a = node(store, clock, 'node-a');
    expect(await a.verify.look()).toBe('verified');
    clock.advance(HOUR - 1);
    await recordVerifyRun(store, await verifyHistory(store, { since: new Date(clock.now() - MINUTE) }), { actor: 'cli:ann@ops', startedAt: new Date(clock.now()) });
    clock.advance(1);
    expect(await a.verify.look()).toBe('verified');
    expect((await readVerifyRuns(store)).map((r) => r.actor)).toEqual(['scheduled', 'cli:ann@ops', 'scheduled']);
  });

  it('renews the lease while a long run reads, and a run whose lease another node took records nothing', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    let leases = 0;
    let keep = true;
    let scanned!: () => void;
    let release!: () => void;
    const scanning = new Promise<void>((resolve) => (scanned = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const watched = Object.create(store, {
      maintenanceLease: { value: async (params: Parameters<JobStore['maintenanceLease']>[0]) => ((leases += 1), keep && (await store.maintenanceLease(params))) },
      historyScan: { value: async (params: Parameters<JobStore['historyScan']>[0]) => (scanned(), await held, store.historyScan(params)) },
    }) as JobStore;
    const a = node(watched, timers.clock, 'node-a', { everyMs: HOUR, windowMs: HOUR }, timers);
    const looking = a.verify.look();
    await scanning;
    // Two renewals while the scan reads, five minutes apart; the second finds the lease gone.
    await timers.advance(5 * MINUTE);
    await waitFor(() => leases === 2);
    keep = false;
    await timers.advance(5 * MINUTE);
    await waitFor(() => leases === 3);
    release();
    await expect(looking).rejects.toThrow('another node took the verify lease');
    expect(await readVerifyRuns(store)).toEqual([]);
    expect(timers.size).toBe(0);
  });

  it('starts once however often it is started, and looks no more once stopped', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    let leases = 0;
    const watched = Object.create(store, {
      maintenanceLease: { value: async (params: Parameters<JobStore['maintenanceLease']>[0]) => ((leases += 1), store.maintenanceLease(params)) },
    }) as JobStore;
    const a = node(watched, timers.clock, 'node-a', { everyMs: HOUR, windowMs: HOUR }, timers);
    a.verify.start();
    a.verify.start();
    expect(timers.size).toBe(1);
    await timers.advance(0);
    await waitFor(() => timers.size === 1 && leases === 1);
    await a.verify.stop();
    a.verify.start();
    await timers.advance(HOUR);
    expect([leases, timers.size]).toEqual([1, 0]);
  });

  it('refuses a bad option in one sentence', () => {
    expect(checkScheduledVerifyOptions(undefined)).toBeNull();
    expect(checkScheduledVerifyOptions(false)).toBeNull();
    expect(checkScheduledVerifyOptions(true)).toEqual({ everyMs: 86_400_000, windowMs: 86_400_000 });
    expect(checkScheduledVerifyOptions({ everyMs: HOUR })).toEqual({ everyMs: HOUR, windowMs: HOUR });
    for (const bad of [1, 'daily', [], { everyMs: 59_999 }, { everyMs: 1.5 }, { windowMs: 91 * 86_400_000 }, { every: HOUR }]) {
      const refused = (() => {
        try {
          checkScheduledVerifyOptions(bad);
        } catch (error) {
          return error;
        }
      })();
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^verify[^\n]+\.$/);
    }
  });
});

/** Lets promise callbacks and I/O run until `done` holds; the memory store needs a few turns, never time. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}
