import { afterEach, expect, it } from '@jest/globals';
import { InvalidArgumentError, type JobState } from '../../lib/core/index.js';
import type { JobStore } from '../../lib/store/index.js';
import { verifyHistory, type VerifyRule } from '../../lib/verify/index.js';

/** A store to verify, and the levers a broken store would pull: an entry written without a transition, a row deleted under its history. */
export interface VerifyTarget {
  readonly store: JobStore;
  /**
   * Appends a history entry for the job, now (by the clock the store stamps such entries with), as
   * a store that broke a promise would record it; with `lease`, naming a worker and a lease deadline;
   * with `inMs`, stamped that long from now.
   */
  writeEntry(jobId: string, state: JobState, attempt: number, lease?: EntryLease, inMs?: number): Promise<void>;
  /** Now, by the clock the store judges leases with (the memory store's is a manual one). */
  now(): number;
  /** Deletes the job's row and leaves its history. */
  deleteRow(jobId: string): Promise<void>;
  /** Deletes the job's oldest `count` entries, as the history trim does. */
  trimOldest(jobId: string, count: number): Promise<void>;
  /** Moves every audit entry `ms` into the past, as if the limits it records had been set that long ago. */
  backdateAudit(ms: number): Promise<void>;
  /**
   * Writes a copy of the job's row under `newId`, as a store that wrote one job twice would, with
   * the entry its insert leaves in the history, stamped `inMs` from now.
   */
  copyJob(jobId: string, newId: string, inMs: number): Promise<void>;
  close(): Promise<void>;
}

/** What an entry into or out of running records of the lease. */
export interface EntryLease {
  readonly workerId: string;
  readonly leaseUntil: Date;
}

const LEASE = 60_000;

/** Claims the job, then ends its lease as `lease` says, by a write no fence judged. */
const endLease = (state: JobState, attempt: number, lease: (t: VerifyTarget) => EntryLease) => async (t: VerifyTarget, id: string, queue: string) => {
  await claim(t.store, queue);
  await t.writeEntry(id, state, attempt, lease(t));
};

/** Claims the job (alone in its queue) for worker w and returns its attempt. */
async function claim(store: JobStore, queue: string): Promise<{ id: string; attempt: number }> {
  const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: [queue], leaseMs: LEASE });
  return { id: job!.id, attempt: job!.attempt };
}

/** A small real workload: successes, a retry, a dead letter replayed and run again, a cancel, a dependant released. Returns its job ids. */
async function workload(store: JobStore): Promise<string[]> {
  const ids: string[] = [];
  const one = async (queue: string, extra: Record<string, unknown> = {}) => {
    const { id } = await store.jobEnqueue({ job: { name: 'work', payload: { queue }, queue, maxAttempts: 2, ...extra } });
    ids.push(id);
    return id;
  };
  const ok = await one('ok');
  const child = await one('child', { dependsOn: [ok] });
  let job = await claim(store, 'ok');
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
  job = await claim(store, 'child');
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: child, attempt: job.attempt, kind: 'succeeded' }] });
  const flaky = await one('flaky');
  for (let attempt = 1; attempt <= 2; attempt++) {
    job = await claim(store, 'flaky');
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: flaky, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
  }
  await store.jobReplay({ jobId: flaky });
  job = await claim(store, 'flaky');
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: flaky, attempt: job.attempt, kind: 'succeeded' }] });
  const dropped = await one('dropped');
  await store.jobCancel({ jobId: dropped });
  await one('waiting', { delayMs: 3_600_000 });
  return ids;
}

/** Limits set long enough ago that every claim since is judged against them (verify allows a margin around a change). */
const LONG_AGO = 10 * 60_000;

/**
 * Another job under the sabotaged job's key, claimed from a queue of its own, then a start of the
 * sabotaged job written as a store that ignored the key's limit would write it, ten seconds into
 * the other's lease (verify judges overlaps longer than its margin).
 */
const startBeside = async (t: VerifyTarget, id: string, key: string) => {
  await t.store.jobEnqueue({ job: { name: 'beside', payload: {}, queue: `${key}-beside`, concurrencyKey: key } });
  await claim(t.store, `${key}-beside`);
  await t.writeEntry(id, 'running', 1, { workerId: 'w', leaseUntil: new Date(t.now() + LEASE) }, 10_000);
};

/** The sabotage table: each rule, a job set up for it, and the broken write that breaks it. */
const SABOTAGE: readonly {
  rule: VerifyRule;
  queue: string;
  dependant?: true;
  key?: string;
  /** More of the sabotaged job's enqueue options. */
  job?: Record<string, unknown>;
  /** Breaks the rule; resolves with the job named for it when that is another than the sabotaged one. */
  break: (t: VerifyTarget, id: string, queue: string) => Promise<string | void>;
}[] = [
  { rule: 'illegal_transition', queue: 's-illegal', break: (t, id) => t.writeEntry(id, 'succeeded', 0) },
  {
    rule: 'terminal_left',
    queue: 's-terminal',
    break: async (t, id) => {
      const job = await claim(t.store, 's-terminal');
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'succeeded' }] });
      await t.writeEntry(id, 'running', 2);
    },
  },
  {
    rule: 'attempt_skipped',
    queue: 's-skipped',
    break: async (t, id) => {
      const job = await claim(t.store, 's-skipped');
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 60_000 }] });
      await t.writeEntry(id, 'running', 3);
    },
  },
  {
    rule: 'two_outcomes',
    queue: 's-twice',
    break: async (t, id) => {
      const job = await claim(t.store, 's-twice');
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 60_000 }] });
      await t.writeEntry(id, 'succeeded', 1);
    },
  },
  {
    rule: 'lost_job',
    queue: 's-lost',
    break: async (t, id) => {
      await claim(t.store, 's-lost');
      await t.deleteRow(id);
    },
  },
  { rule: 'state_mismatch', queue: 's-mismatch', break: (t, id) => t.writeEntry(id, 'running', 1) },
  // A success its lease's holder wrote a second after the lease ran out: the fence would refuse it.
  { rule: 'stale_lease', queue: 's-stale', break: endLease('succeeded', 1, (t) => ({ workerId: 'w', leaseUntil: new Date(t.now() - 1_000) })) },
  // Another worker claims the job while its lease has a minute to run.
  { rule: 'early_reclaim', queue: 's-early', break: endLease('running', 2, (t) => ({ workerId: 'w2', leaseUntil: new Date(t.now() + LEASE) })) },
  // The attempt ends the lease of a worker that never claimed it.
  // A dependant released while its parent has not run yet.
  { rule: 'early_release', queue: 's-release', dependant: true, break: (t, id) => t.writeEntry(id, 'scheduled', 0) },
  { rule: 'wrong_holder', queue: 's-holder', break: endLease('succeeded', 1, (t) => ({ workerId: 'intruder', leaseUntil: new Date(t.now() + LEASE) })) },
  // The job starts while another runs under its key, capped at one ten minutes ago.
  {
    rule: 'limit_exceeded',
    queue: 's-cap',
    key: 's-cap',
    break: async (t, id) => {
      await t.store.concurrencyLimitSet({ target: { key: 's-cap' }, max: 1 });
      await t.backdateAudit(LONG_AGO);
      await startBeside(t, id, 's-cap');
    },
  },
  // The job starts a second time in a window its key's rate allows once.
  {
    rule: 'rate_exceeded',
    queue: 's-rate',
    key: 's-rate',
    break: async (t, id) => {
      await t.store.rateLimitSet({ target: { key: 's-rate' }, rate: { max: 1, perMs: 300_000 } });
      await t.backdateAudit(LONG_AGO);
      await startBeside(t, id, 's-rate');
    },
  },
  // The job, dead-lettered, is replayed while another holds its unique key, as a replay that ignored the key would.
  {
    rule: 'unique_key_twice',
    queue: 's-unique',
    job: { uniqueKey: 's-unique', maxAttempts: 1 },
    break: async (t, id) => {
      const job = await claim(t.store, 's-unique');
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
      await t.store.jobEnqueue({ job: { name: 'sabotaged', payload: {}, queue: 's-unique-beside', uniqueKey: 's-unique' } });
      await t.writeEntry(id, 'scheduled', 0, undefined, 10_000);
    },
  },
  // A schedule's occurrence written a second time under another id, as a mint that ignored the occurrence id would.
  {
    rule: 'occurrence_twice',
    queue: 's-occurrence',
    break: async (t) => {
      const { schedule } = await t.store.scheduleUpsert({ schedule: { name: 'minted', payload: {}, queue: 's-occurrence-minted', everyMs: 3_600_000 } });
      const { id: minted } = await t.store.scheduleTrigger({ scheduleId: schedule.id });
      const twin = '0190a9d2-0000-7000-8000-00000000beef';
      await t.copyJob(minted, twin, 10_000);
      return twin;
    },
  },
];

/** verifyHistory on one store: clean over a real workload, each sabotaged rule named with its job. */
export function verifyCases(open: () => Promise<VerifyTarget>): void {
  let target: VerifyTarget | undefined;
  const fresh = async () => (target = await open());
  afterEach(async () => {
    await target?.close();
    target = undefined;
  });

  it('issue 40: a real workload verifies clean, page boundaries anywhere, and the report says what it checked', async () => {
    const t = await fresh();
    const ids = await workload(t.store);
    for (const pageSize of [5_000, 3, 1]) {
      const report = await verifyHistory(t.store, { pageSize });
      expect(report.violations).toEqual([]);
      expect(report.violationCount).toBe(0);
      expect(report.checked).toEqual({
        entries: expect.any(Number),
        jobs: ids.length,
        transitions: report.checked.entries - ids.length,
        attempts: 5,
        leases: 5,
        leasesUnrecorded: 0,
        // The dependant, released when its parent succeeded.
        releases: 1,
        releasesUnjudged: 0,
        jobsCompared: ids.length,
        // No limit was ever set: none to judge a start against.
        capStarts: 0,
        rateStarts: 0,
        startsUnattributed: 0,
        // No job has a unique key, and none was minted.
        uniqueKeysTaken: 0,
        occurrencesMinted: 0,
      });
      expect(report.notChecked.join(' ')).not.toMatch(/lease/);
    }
  });

  it('issue 40: each sabotaged rule is named, with its job and the entries that show it', async () => {
    const t = await fresh();
    await workload(t.store);
    const broken = new Map<VerifyRule, string>();
    for (const { rule, queue, dependant, key, job: extra, break: sabotage } of SABOTAGE) {
      const parent = dependant ? [(await t.store.jobEnqueue({ job: { name: 'parent', payload: { rule }, queue: `${queue}-parent` } })).id] : undefined;
      const { id } = await t.store.jobEnqueue({
        job: { name: 'sabotaged', payload: { rule }, queue, maxAttempts: 3, ...(parent ? { dependsOn: parent } : {}), ...(key ? { concurrencyKey: key } : {}), ...extra },
      });
      broken.set(rule, (await sabotage(t, id, queue)) ?? id);
    }
    const report = await verifyHistory(t.store, { pageSize: 4 });
    for (const [rule, jobId] of broken) {
      const named = report.violations.filter((v) => v.jobId === jobId);
      expect({ rule, named: named.map((v) => v.rule) }).toEqual({ rule, named: expect.arrayContaining([rule]) });
      for (const v of named) {
        expect(v.message).toMatch(/^[^\n]+\.$/);
        expect(v.message).toContain(jobId);
        expect(v.entryIds.length).toBeGreaterThan(0);
      }
    }
    // Nothing else is named: the workload's jobs verify clean beside them.
    expect(new Set(report.violations.map((v) => v.jobId))).toEqual(new Set(broken.values()));
    expect(report.violationCount).toBe(report.violations.length);
  });

  it('issue 40: starts under a cap and a rate, as the store enforced them, verify clean; each start is judged against the limits of its key and queue', async () => {
    const t = await fresh();
    await t.store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 1 });
    await t.store.concurrencyLimitSet({ target: { queue: 'capped' }, max: 2 });
    await t.store.rateLimitSet({ target: { key: 'tenant' }, rate: { max: 2, perMs: 300_000 } });
    await t.backdateAudit(LONG_AGO);
    const jobs = (n: number) => t.store.jobEnqueueMany({ jobs: Array.from({ length: n }, (_, i) => ({ name: 'work', payload: i, queue: 'capped', concurrencyKey: 'tenant' })) });
    await jobs(3);
    await t.store.jobEnqueue({ job: { name: 'free', payload: 0, queue: 'capped' } });
    const claimAll = () => t.store.jobClaim({ workerId: 'w', limit: 10, queues: ['capped'], leaseMs: LEASE });
    // One of the key (its cap), and the unkeyed one beside it (the queue's cap of two).
    const first = await claimAll();
    expect(first.map((j) => j.concurrencyKey).sort()).toEqual([null, 'tenant']);
    expect(await claimAll()).toEqual([]);
    await t.store.jobCompleteMany({ workerId: 'w', outcomes: first.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
    const second = await claimAll();
    expect(second).toHaveLength(1);
    await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: second[0]!.id, attempt: 1, kind: 'succeeded' }] });
    // The key's rate of two is used up: its third job waits.
    expect(await claimAll()).toEqual([]);
    const report = await verifyHistory(t.store, { pageSize: 2 });
    expect(report.violations).toEqual([]);
    // Three starts under the queue's cap, two of them under the key's cap and rate.
    expect(report.checked).toMatchObject({ attempts: 3, capStarts: 5, rateStarts: 2, startsUnattributed: 0 });
    expect(report.notChecked.join(' ')).not.toMatch(/limit/i);
  });

  it('issue 40: a start within the margin of a limit\'s change is not judged (a minute on PostgreSQL and MySQL, 10 ms where writes take turns), and a start of a job no longer stored is counted, not judged', async () => {
    const t = await fresh();
    await t.store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 1 });
    const { id } = await t.store.jobEnqueue({ job: { name: 'work', payload: 1, queue: 'fresh', concurrencyKey: 'tenant' } });
    const job = await claim(t.store, 'fresh');
    // A forged second start beside it: over the cap, but the cap was set a moment ago.
    const { id: beside } = await t.store.jobEnqueue({ job: { name: 'work', payload: 2, queue: 'fresh-beside', concurrencyKey: 'tenant' } });
    await t.writeEntry(beside, 'running', 1, { workerId: 'w', leaseUntil: new Date(t.now() + LEASE) }, 10_000);
    const justSet = await verifyHistory(t.store);
    if (t.store.capabilities.serialWrites === true) {
      expect(justSet.violations.map((v) => v.rule).sort()).toEqual(['limit_exceeded', 'state_mismatch']);
    } else {
      expect(justSet.violations.map((v) => v.rule)).toEqual(['state_mismatch']);
      expect(justSet.checked).toMatchObject({ capStarts: 0 });
    }
    await t.backdateAudit(LONG_AGO);
    expect((await verifyHistory(t.store)).violations.map((v) => [v.rule, v.jobId])).toEqual(expect.arrayContaining([['limit_exceeded', beside]]));
    // The first job succeeds and is deleted, as retention would: its start has no key to judge by.
    await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'succeeded' }] });
    await t.deleteRow(id);
    const gone = await verifyHistory(t.store);
    expect(gone.checked).toMatchObject({ startsUnattributed: 1 });
    expect(gone.notChecked).toContain('Limits for 1 start of jobs no longer stored: their queue and key went with them.');
  });

  it('issue 40: the history names the worker that took and ended each lease, and the deadline it ended; an entry without them is counted, not judged', async () => {
    const t = await fresh();
    const { id } = await t.store.jobEnqueue({ job: { name: 'work', payload: 1, queue: 'lease' } });
    const [job] = await t.store.jobClaim({ workerId: 'w-1', limit: 1, queues: ['lease'], leaseMs: LEASE });
    await t.store.jobCompleteMany({ workerId: 'w-1', outcomes: [{ jobId: id, attempt: job!.attempt, kind: 'succeeded' }] });
    const [enqueued, running, succeeded] = await t.store.jobHistory({ jobId: id });
    expect([enqueued!.workerId, enqueued!.leaseUntil]).toEqual([null, null]);
    expect([running!.workerId, running!.leaseUntil]).toEqual(['w-1', null]);
    expect([succeeded!.workerId, succeeded!.leaseUntil]).toEqual(['w-1', job!.leasedUntil]);
    expect(succeeded!.at.getTime()).toBeLessThan(job!.leasedUntil!.getTime());

    // An end of a lease written before schema 26 records neither: counted, said, not judged.
    const { id: old } = await t.store.jobEnqueue({ job: { name: 'work', payload: 2, queue: 'old' } });
    await claim(t.store, 'old');
    await t.writeEntry(old, 'scheduled', 1);
    const report = await verifyHistory(t.store, { until: new Date(t.now() + 3_600_000) });
    expect(report.violations).toEqual([]);
    expect(report.checked).toMatchObject({ leases: 1, leasesUnrecorded: 1 });
    expect(report.notChecked[0]).toBe('The lease of 1 ended attempt: its entry records no worker or lease deadline (written before schema 26, or by an older node).');
  });

  it('issue 40: a job that moves on between the scan and the read of its row is no finding, nor is one the trim cuts between two pages', async () => {
    const t = await fresh();
    const { id: moving } = await t.store.jobEnqueue({ job: { name: 'work', payload: 1, queue: 'moving' } });
    const job = await claim(t.store, 'moving');
    let moved = false;
    // The job succeeds after its entries were read and before its row is: the row is ahead of them.
    const racing = Object.create(t.store, {
      jobStatusMany: {
        value: async (params: Parameters<JobStore['jobStatusMany']>[0]) => {
          if (!moved) {
            moved = true;
            await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: moving, attempt: job.attempt, kind: 'succeeded' }] });
          }
          return t.store.jobStatusMany(params);
        },
      },
    }) as JobStore;
    const raced = await verifyHistory(racing);
    expect(moved).toBe(true);
    expect(raced.violations).toEqual([]);

    // A job with a long history, read two entries a page; after the page with its first two, the
    // trim deletes its four oldest, so the next page starts two entries on: a gap no store wrote.
    const { id: long } = await t.store.jobEnqueue({ job: { name: 'work', payload: 2, queue: 'long', maxAttempts: 5 } });
    for (let i = 0; i < 3; i++) {
      const run = await claim(t.store, 'long');
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: long, attempt: run.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
    }
    let trimmed = false;
    const trimming = Object.create(t.store, {
      historyScan: {
        value: async (params: Parameters<JobStore['historyScan']>[0]) => {
          const page = await t.store.historyScan(params);
          if (!trimmed && page.some((entry) => entry.jobId === long)) {
            trimmed = true;
            await t.trimOldest(long, 4);
          }
          return page;
        },
      },
    }) as JobStore;
    const cut = await verifyHistory(trimming, { pageSize: 2 });
    expect(trimmed).toBe(true);
    expect(cut.violations).toEqual([]);
  });

  it('issue 40: a dead letter whose row is gone is a lost job: only succeeded and cancelled jobs are ever deleted', async () => {
    const t = await fresh();
    const { id } = await t.store.jobEnqueue({ job: { name: 'work', payload: 1, queue: 'dead', maxAttempts: 1 } });
    const job = await claim(t.store, 'dead');
    await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
    expect((await verifyHistory(t.store)).violations).toEqual([]);
    await t.deleteRow(id);
    expect((await verifyHistory(t.store)).violations.map((v) => [v.rule, v.jobId])).toEqual([['lost_job', id]]);
  });

  it('issue 40: more jobs than one read of their rows takes are all compared', async () => {
    const t = await fresh();
    for (let at = 0; at < 1_100; at += 550) await t.store.jobEnqueueMany({ jobs: Array.from({ length: 550 }, (_, i) => ({ name: 'work', payload: at + i, queue: 'many' })) });
    const report = await verifyHistory(t.store);
    expect(report.violations).toEqual([]);
    expect(report.checked).toMatchObject({ jobs: 1_100, jobsCompared: 1_100 });
  });

  it('issue 40: a range checks only its entries; a range with none says nothing could be checked', async () => {
    const t = await fresh();
    await workload(t.store);
    const { id } = await t.store.jobEnqueue({ job: { name: 'sabotaged', payload: {}, queue: 's-range' } });
    const all = await verifyHistory(t.store);
    await t.writeEntry(id, 'succeeded', 0);
    const cut = new Date(Math.max(...(await t.store.jobHistory({ jobId: id })).map((e) => e.at.getTime())));
    // The broken entry is the job's newest; a range that ends at it leaves it out.
    const before = await verifyHistory(t.store, { until: cut });
    expect(before.violations).toEqual([]);
    expect(before.checked.jobsCompared).toBe(0);
    expect((await verifyHistory(t.store)).violations.map((v) => v.rule)).toContain('illegal_transition');
    const empty = await verifyHistory(t.store, { since: new Date(cut.getTime() + 3_600_000) });
    expect(empty.checked.entries).toBe(0);
    expect(empty.notChecked[0]).toMatch(/^Every rule: the history holds no entry in this range\./);
    expect(all.checked.entries).toBeGreaterThan(0);
  });

  it('issue 40: bad options are refused in one sentence before anything is read', async () => {
    const t = await fresh();
    for (const options of [{ since: 'yesterday' }, { until: new Date(Number.NaN) }, { pageSize: 0 }, { pageSize: 10_001 }, { maxViolations: 1.5 }, { since: new Date(2), until: new Date(1) }]) {
      const refused = await verifyHistory(t.store, options as never).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^[^\n]+\.$/);
    }
  });
}
