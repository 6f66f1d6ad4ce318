import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MysqlJobStore, type JobStore } from '../../lib/store/index.js';
import { isWork, statementBudgetCases, type BudgetTarget } from '../store/statement-budget.cases.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * MySQL's numbers. The store's sessions send several statements in one query, joined by ';\n', and
 * the store's statement listener hears each query once: a round trip is one call of the listener,
 * and the statements are the parts of its text. Transaction control (START TRANSACTION, COMMIT)
 * rides with the work in those same queries, so it costs no round trip of its own, and is left out
 * of the statement counts as on PostgreSQL and SQLite.
 *
 * Every hot write is one transaction of two round trips, whatever the batch size: its locking
 * reads go with START TRANSACTION, its writes with the COMMIT. A write changes its rows with one
 * UPDATE per set of equal new values, so a batch's statements do not grow with the batch either.
 * - enqueue, 2 (4 statements): the clock; the INSERT, its history entry and its count change. A job
 *   whose id the store made needs no look-up.
 * - claim, 2 (10): the limits gate, the clock, the paused queues and the lowest priority in use
 *   into session variables, then the lapsed leases and that priority's due jobs, both FOR UPDATE
 *   SKIP LOCKED; the leases (one UPDATE), history, counts.
 * - heartbeat, 2 (3): the clock and the jobs locked; one UPDATE of the leases.
 * - complete, 2 (7): the clock, the jobs' parent guard (mysql-locks.ts) and the jobs locked; an
 *   UPDATE for the successes and one for the retries, history, counts. Relinquish, 2 (6): the same
 *   with one UPDATE.
 * - complete-and-claim, 2 (13): the outcomes' guard and locking read go with the claim's reads,
 *   and their writes with the claim's.
 * - sweep, 3 (7): the lapsed leases found, then guarded and locked by id (so their open edges are
 *   read under the guard), then the writes; with nothing lapsed, the search and its COMMIT, 2 (1),
 *   and the settle sweep's likewise. A listing, 1 (3): the page's edge into
 *   a session variable, then its rows.
 * - under the lean finish, an outcome write takes one round trip more, to read whether a success
 *   is needed (dependants, observers), and deletes each success it may with three statements of
 *   its own (its history, its edges, its row): 16 successes make 48 more.
 *
 * Counts, not timings: a change in either direction fails; update the number deliberately.
 */

/** What one operation sent: its round trips, and the statements they carried (transaction control left out). */
interface Sent {
  readonly roundTrips: number;
  readonly statements: number;
  readonly texts: string[];
}

/** Round trips and statements per operation, for batches of 32 (enqueue: one job). */
interface MysqlBudget {
  readonly enqueueOne: Omit<Sent, 'texts'>;
  readonly claim32: Omit<Sent, 'texts'>;
  readonly heartbeat32: Omit<Sent, 'texts'>;
  readonly complete32: Omit<Sent, 'texts'>;
  readonly completeAndClaim32: Omit<Sent, 'texts'>;
  readonly relinquish32: Omit<Sent, 'texts'>;
  readonly sweep32: Omit<Sent, 'texts'>;
  /** A lease sweep and a settle sweep that find nothing, together. */
  readonly idleSweeps: Omit<Sent, 'texts'>;
  readonly list200: Omit<Sent, 'texts'>;
}

interface MysqlBudgetTarget extends BudgetTarget {
  measure(work: () => Promise<unknown>): Promise<Sent>;
}

let dataSource: DataSource;
const stores: MysqlJobStore[] = [];

/** A store on tables of its own, under a listener that records each query the store sends. */
async function budgetTarget(finish: 'keep' | 'lean'): Promise<MysqlBudgetTarget> {
  let sink: string[] | null = null;
  const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('budget'), finish, poolSize: 2, onStatement: (text) => sink?.push(text) });
  stores.push(store);
  await store.migrate();
  const measure = async (work: () => Promise<unknown>): Promise<Sent> => {
    const queries: string[] = [];
    sink = queries;
    try {
      await work();
    } finally {
      sink = null;
    }
    const texts = queries.flatMap((query) => query.split(';\n')).filter(isWork);
    return { roundTrips: queries.length, statements: texts.length, texts };
  };
  return {
    store,
    measure,
    count: async (work) => {
      const { statements, texts } = await measure(work);
      return { statements, texts };
    },
    async lapseLeases() {
      await dataSource.query(`UPDATE ${store.naming.jobs} SET leased_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE state = 'running'`);
    },
  };
}

const payload = { order: 'A-1001', note: 'x'.repeat(80) };
const input = (queue: string) => ({ name: 'budget.noop', payload, queue });
const counted = ({ roundTrips, statements }: Sent) => ({ roundTrips, statements });

/** Pins the round trips and statements of each hot operation, MySQL's own set beside the shared one. */
function mysqlBudgetCases(target: () => MysqlBudgetTarget, budget: MysqlBudget): void {
  const claim = (store: JobStore, queue: string, limit = 32) => store.jobClaim({ workerId: 'budget', limit, queues: [queue], leaseMs: 60_000 });

  it(`enqueues one job in ${budget.enqueueOne.roundTrips} round trips`, async () => {
    const { store, measure } = target();
    expect(counted(await measure(() => store.jobEnqueue({ job: input('m-enqueue') })))).toEqual(budget.enqueueOne);
  });

  it(`claims 32 jobs in ${budget.claim32.roundTrips} round trips, and renews their 32 leases in ${budget.heartbeat32.roundTrips}`, async () => {
    const { store, measure } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 40 }, () => input('m-claim')) });
    let claimed: Awaited<ReturnType<JobStore['jobClaim']>> = [];
    expect(counted(await measure(async () => (claimed = await claim(store, 'm-claim'))))).toEqual(budget.claim32);
    expect(claimed).toHaveLength(32);
    let renewed = 0;
    const leases = claimed.map((job) => ({ jobId: job.id, attempt: job.attempt }));
    const sent = await measure(async () => (renewed = (await store.jobHeartbeat({ workerId: 'budget', leases, leaseMs: 60_000 })).renewed.length));
    expect(renewed).toBe(32);
    expect(counted(sent)).toEqual(budget.heartbeat32);
  });

  it(`reports 32 outcomes in ${budget.complete32.roundTrips} round trips`, async () => {
    const { store, measure } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 32 }, () => input('m-complete')) });
    const claimed = await claim(store, 'm-complete');
    const outcomes = claimed.map((job, i) =>
      i % 2 === 0 ? { jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const } : { jobId: job.id, attempt: job.attempt, kind: 'failed' as const, error: 'boom', retryDelayMs: 1_000 },
    );
    let applied = 0;
    const sent = await measure(async () => (applied = (await store.jobCompleteMany({ workerId: 'budget', outcomes })).filter((r) => r.status === 'applied').length));
    expect(applied).toBe(32);
    expect(counted(sent)).toEqual(budget.complete32);
  });

  it(`reports 32 outcomes and claims the next 32 in ${budget.completeAndClaim32.roundTrips} round trips`, async () => {
    const { store, measure } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 64 }, () => input('m-both')) });
    const claimed = await claim(store, 'm-both');
    const outcomes = claimed.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const }));
    let both: Awaited<ReturnType<NonNullable<JobStore['jobCompleteAndClaim']>>> | undefined;
    const sent = await measure(async () => (both = await store.jobCompleteAndClaim!({ workerId: 'budget', outcomes, claim: { limit: 32, queues: ['m-both'], leaseMs: 60_000 } })));
    expect(both!.results.filter((r) => r.status === 'applied')).toHaveLength(32);
    expect(both!.jobs).toHaveLength(32);
    expect(counted(sent)).toEqual(budget.completeAndClaim32);
  });

  it(`hands 32 leases back in ${budget.relinquish32.roundTrips} round trips`, async () => {
    const { store, measure } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 32 }, () => input('m-relinquish')) });
    const claimed = await claim(store, 'm-relinquish');
    const leases = claimed.map((job) => ({ jobId: job.id, attempt: job.attempt }));
    let applied = 0;
    const sent = await measure(async () => (applied = (await store.jobRelinquishMany({ workerId: 'budget', leases })).filter((r) => r.status === 'applied').length));
    expect(applied).toBe(32);
    expect(counted(sent)).toEqual(budget.relinquish32);
  });

  it(`sweeps 32 lapsed leases in ${budget.sweep32.roundTrips} round trips`, async () => {
    const { store, measure, lapseLeases } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 32 }, () => ({ ...input('m-sweep'), maxAttempts: 1 })) });
    expect(await claim(store, 'm-sweep')).toHaveLength(32);
    await lapseLeases();
    let swept = 0;
    const sent = await measure(async () => (swept = (await store.jobExpireLeases({ limit: 32 })).length));
    expect(swept).toBe(32);
    expect(counted(sent)).toEqual(budget.sweep32);
  });

  it(`sweeps leases and edges with nothing to do in ${budget.idleSweeps.roundTrips} round trips`, async () => {
    const { store, measure } = target();
    let found = -1;
    const sent = await measure(async () => (found = (await store.jobExpireLeases({ limit: 32 })).length + (await store.jobSettleDependencies({ limit: 32 }))));
    expect(found).toBe(0);
    expect(counted(sent)).toEqual(budget.idleSweeps);
  });

  it(`lists 200 jobs in ${budget.list200.roundTrips} round trip`, async () => {
    const { store, measure } = target();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 200 }, () => input('m-list')) });
    let listed = 0;
    const sent = await measure(async () => (listed = (await store.jobList({ queue: 'm-list', limit: 200 })).length));
    expect(listed).toBe(200);
    expect(counted(sent)).toEqual(budget.list200);
  });
}

let target: MysqlBudgetTarget;
let lean: MysqlBudgetTarget;

beforeAll(async () => {
  dataSource = await openMariadbDataSource({ poolSize: 2 });
  target = await budgetTarget('keep');
  lean = await budgetTarget('lean');
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  for (const store of stores) await dropInstallation(dataSource, store.naming);
  await dataSource.destroy();
});

const KEEP: MysqlBudget = {
  enqueueOne: { roundTrips: 2, statements: 4 },
  claim32: { roundTrips: 2, statements: 10 },
  heartbeat32: { roundTrips: 2, statements: 3 },
  complete32: { roundTrips: 2, statements: 7 },
  completeAndClaim32: { roundTrips: 2, statements: 13 },
  relinquish32: { roundTrips: 2, statements: 6 },
  sweep32: { roundTrips: 3, statements: 7 },
  idleSweeps: { roundTrips: 4, statements: 2 },
  list200: { roundTrips: 1, statements: 3 },
};

const LEAN: MysqlBudget = { ...KEEP, complete32: { roundTrips: 3, statements: 56 }, completeAndClaim32: { roundTrips: 3, statements: 110 } };

describe('statement budget on MySQL (MariaDB): round trips and statements', () => {
  mysqlBudgetCases(() => target, KEEP);
});

describe('statement budget on MySQL (MariaDB) under the lean finish: round trips and statements', () => {
  mysqlBudgetCases(() => lean, LEAN);
});

describe('statement budget on MySQL (MariaDB): the shared cases, in statements', () => {
  statementBudgetCases(() => target, { enqueueOne: 4, claim32: 10, complete32: 7, completeAndClaim32: 13, sweep32: 7, list200: 3 });
});

describe('statement budget on MySQL (MariaDB) under the lean finish: the shared cases, in statements', () => {
  statementBudgetCases(() => lean, { enqueueOne: 4, claim32: 10, complete32: 56, completeAndClaim32: 110, sweep32: 7, list200: 3 });
});
