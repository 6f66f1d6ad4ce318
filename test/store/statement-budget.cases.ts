import { expect, it } from '@jest/globals';
import type { JobStore } from '../../lib/store/index.js';

/** One store under a statement counter. */
export interface BudgetTarget {
  readonly store: JobStore;
  /** Statements the store sent while `work` ran, transaction control (BEGIN, COMMIT, savepoints) left out. */
  count(work: () => Promise<unknown>): Promise<{ statements: number; texts: string[] }>;
  /** Makes every running lease lapse, as if its lease time had passed (test setup, not measured). */
  lapseLeases(): Promise<void>;
}

/** Statements per operation. A change in either direction fails: update the number deliberately. */
export interface Budget {
  readonly enqueueOne: number;
  readonly claim32: number;
  readonly complete32: number;
  /** 32 outcomes and a claim of 32 in one jobCompleteAndClaim (issue 36 item 2). */
  readonly completeAndClaim32: number;
  readonly sweep32: number;
  readonly list200: number;
}

// SQLite's busy handler is switched off around each try for the write lock and back on after
// (three PRAGMA calls into the library, no I/O): lock control, like BEGIN, not work.
const TRANSACTION_CONTROL = /^\s*(BEGIN|START TRANSACTION|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA busy_timeout)\b/i;
export const isWork = (text: string) => !TRANSACTION_CONTROL.test(text);

/** A statement hook for a store, and the counter that reads it while one operation runs. */
export function statementRecorder(): { hook: (text: string) => void; count: BudgetTarget['count'] } {
  let sink: string[] | null = null;
  return {
    hook: (text) => sink?.push(text),
    async count(work) {
      const texts: string[] = [];
      sink = texts;
      try {
        await work();
      } finally {
        sink = null;
      }
      const counted = texts.filter(isWork);
      return { statements: counted.length, texts: counted };
    },
  };
}

const payload = { order: 'A-1001', note: 'x'.repeat(80) };
const input = (queue: string, maxAttempts = 5) => ({ name: 'budget.noop', payload, queue, maxAttempts });

/**
 * Pins how many SQL statements each hot operation costs, whatever the batch size. These are
 * counts, not timings: deterministic on any machine.
 */
export function statementBudgetCases(target: () => BudgetTarget, budget: Budget): void {
  it(`enqueues one job (its wake-up hint included) in ${budget.enqueueOne} statement(s)`, async () => {
    const { store, count } = target();
    const { statements } = await count(() => store.jobEnqueue({ job: input('enqueue') }));
    expect(statements).toBe(budget.enqueueOne);
  });

  it(`claims 32 jobs in ${budget.claim32} statement(s) and reports their 32 outcomes in ${budget.complete32}`, async () => {
    const { store, count } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 40 }, () => input('claim')) });
    let claimed: Awaited<ReturnType<JobStore['jobClaim']>> = [];
    const claim = await count(async () => (claimed = await store.jobClaim({ workerId: 'budget', limit: 32, queues: ['claim'], leaseMs: 60_000 })));
    expect(claimed).toHaveLength(32);
    expect(claim.statements).toBe(budget.claim32);
    const outcomes = claimed.map((job, i) =>
      i % 2 === 0 ? { jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const } : { jobId: job.id, attempt: job.attempt, kind: 'failed' as const, error: 'boom', retryDelayMs: 1_000 },
    );
    let results: Awaited<ReturnType<JobStore['jobCompleteMany']>> = [];
    const complete = await count(async () => (results = await store.jobCompleteMany({ workerId: 'budget', outcomes })));
    expect(results.filter((r) => r.status === 'applied')).toHaveLength(32);
    expect(complete.statements).toBe(budget.complete32);
  });

  it(`issue 36 item 2: reports 32 outcomes and claims the next 32 in ${budget.completeAndClaim32} statement(s)`, async () => {
    const { store, count } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 64 }, () => input('both')) });
    const claimed = await store.jobClaim({ workerId: 'budget', limit: 32, queues: ['both'], leaseMs: 60_000 });
    const outcomes = claimed.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const }));
    let both: Awaited<ReturnType<NonNullable<JobStore['jobCompleteAndClaim']>>> | undefined;
    const sent = await count(async () => (both = await store.jobCompleteAndClaim!({ workerId: 'budget', outcomes, claim: { limit: 32, queues: ['both'], leaseMs: 60_000 } })));
    expect(both!.results.filter((r) => r.status === 'applied')).toHaveLength(32);
    expect(both!.jobs).toHaveLength(32);
    expect(sent.statements).toBe(budget.completeAndClaim32);
  });

  it(`sweeps 32 lapsed leases in ${budget.sweep32} statement(s)`, async () => {
    const { store, count, lapseLeases } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 32 }, () => input('sweep', 1)) });
    expect(await store.jobClaim({ workerId: 'budget', limit: 32, queues: ['sweep'], leaseMs: 60_000 })).toHaveLength(32);
    await lapseLeases();
    let swept: Awaited<ReturnType<JobStore['jobExpireLeases']>> = [];
    const sweep = await count(async () => (swept = await store.jobExpireLeases({ limit: 32 })));
    expect(swept).toHaveLength(32);
    expect(sweep.statements).toBe(budget.sweep32);
  });

  it(`lists 200 jobs in ${budget.list200} statement(s)`, async () => {
    const { store, count } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 200 }, () => input('list')) });
    let listed: Awaited<ReturnType<JobStore['jobList']>> = [];
    const list = await count(async () => (listed = await store.jobList({ queue: 'list', limit: 200 })));
    expect(listed).toHaveLength(200);
    expect(list.statements).toBe(budget.list200);
  });
}
