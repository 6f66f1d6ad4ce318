import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { IllegalTransitionError, StoreBusyError, type JobRecord } from '../../lib/core/index.js';
import { fromMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { MysqlJobStore, type EnqueueInput } from '../../lib/store/index.js';
import { gate, tracked } from '../support/lock-waits.js';
import { lockWaiters, untilLockWait } from '../support/mariadb-lock-waits.js';
import { guardBucket } from '../../lib/store/mysql/mysql-locks.js';
import { openMariadbNodes, type MariadbNode } from '../support/mariadb-nodes.js';
import { dropInstallation, heldTransactions, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * Several nodes against one MariaDB installation: the PostgreSQL races (postgres-limits,
 * postgres-rate-limits, postgres-claim, postgres-unique-keys and dependency-race specs) on the
 * MySQL store. Where the PostgreSQL specs read pg_locks or pg_stat_activity to see a statement
 * wait, these read InnoDB's list of waiting transactions (mariadb-lock-waits.ts); nothing sleeps.
 */

const LEASE_MS = 60_000;
const CLAIMERS = 8;

let admin: DataSource;
let dataSource: DataSource;
const cleanups: (() => Promise<void>)[] = [];
const held = heldTransactions();

beforeAll(async () => {
  admin = await openMariadbDataSource({ poolSize: 4 });
  dataSource = await openMariadbDataSource({ poolSize: 8 });
});

afterAll(async () => {
  await held.release();
  for (const cleanup of cleanups) await cleanup();
  await dataSource.destroy();
  await admin.destroy();
});

/** `count` nodes on a fresh installation, ended and dropped after the file. */
async function cluster(count: number, tag: string): Promise<MariadbNode[]> {
  const opened = await openMariadbNodes(count, uniquePrefix(tag));
  cleanups.push(opened.close);
  return opened.nodes;
}

/** One store on the file's DataSource, on a fresh installation. */
async function openStore(options: { finish?: 'keep' | 'lean'; onStatement?: (text: string) => void; poolSize?: number } = {}): Promise<MysqlJobStore> {
  const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('race'), poolSize: options.poolSize ?? 4, ...options });
  cleanups.push(async () => {
    await store.close();
    await dropInstallation(admin, store.naming);
  });
  await store.migrate();
  return store;
}

const hostTransaction = (source: DataSource = dataSource): Promise<QueryRunner> => held.open(source);

/**
 * A claim, or none when it failed with StoreBusyError, which is noted in `busy`: a worker takes
 * that as a failed poll and polls again, so the race goes on and its invariants are still checked;
 * the race then asserts that no claim failed so, since claimers that only skip each other's rows
 * have no lock to lose six times in a row.
 */
async function claimOrBusy(busy: string[], claim: () => Promise<JobRecord[]>): Promise<JobRecord[]> {
  try {
    return await claim();
  } catch (error) {
    if (!(error instanceof StoreBusyError)) throw error;
    busy.push(`${(error.cause as { code?: string } | undefined)?.code}: ${(error.cause as Error | undefined)?.message}`);
    return [];
  }
}

/** Ends a transaction the test drove, and hands its session back. */
async function end(runner: QueryRunner, how: 'commit' | 'rollback'): Promise<void> {
  await (how === 'commit' ? runner.commitTransaction() : runner.rollbackTransaction());
  await runner.release();
}

const count = async (table: string, where = 'TRUE') => Number(((await admin.query(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`)) as { n: string }[])[0]!.n);

describe('concurrency limits under concurrent claimers on MySQL (MariaDB)', () => {
  // Eight nodes race for the same capped jobs. After every claim the test reads the running count
  // of each cap from the database; no committed state may ever show a cap exceeded.
  const LIMITS = { 'key:tenant-a': 2, 'key:tenant-b': 3, 'queue:capped': 5 } as const;

  it(`never exceeds a key or queue cap with ${CLAIMERS} claimers racing, sampled after every claim`, async () => {
    const nodes = await cluster(CLAIMERS, 'lim');
    const [{ store: setup }] = nodes as [MariadbNode];
    const jobs = setup.naming.jobs;
    await setup.concurrencyLimitSet({ target: { key: 'tenant-a' }, max: LIMITS['key:tenant-a'] });
    await setup.concurrencyLimitSet({ target: { key: 'tenant-b' }, max: LIMITS['key:tenant-b'] });
    await setup.concurrencyLimitSet({ target: { queue: 'capped' }, max: LIMITS['queue:capped'] });
    const inputs: EnqueueInput[] = [];
    for (let i = 0; i < 240; i++) {
      const key = ['tenant-a', 'tenant-b', undefined][i % 3];
      inputs.push({ name: 'limited', queue: i % 4 === 0 ? 'capped' : 'default', payload: i, ...(key ? { concurrencyKey: key } : {}) });
    }
    await setup.jobEnqueueMany({ jobs: inputs });

    const runningCounts = async (): Promise<Record<string, number>> => {
      const rows = (await admin.query(
        `SELECT CONCAT('key:', CAST(concurrency_key AS CHAR CHARACTER SET utf8mb4)) AS k, COUNT(*) AS n FROM ${jobs}
           WHERE state = 'running' AND leased_until > UTC_TIMESTAMP(3) AND concurrency_key IS NOT NULL GROUP BY concurrency_key
         UNION ALL
         SELECT CONCAT('queue:', queue), COUNT(*) FROM ${jobs} WHERE state = 'running' AND leased_until > UTC_TIMESTAMP(3) GROUP BY queue`,
      )) as { k: string; n: string }[];
      return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
    };
    const peak: Record<string, number> = {};
    const violations: string[] = [];
    const busy: string[] = [];
    let claims = 0;
    await Promise.all(
      nodes.map(async ({ store }, index) => {
        const workerId = `claimer-${index}`;
        for (;;) {
          const claimed = await claimOrBusy(busy, () => store.jobClaim({ workerId, limit: 3, queues: ['default', 'capped'], leaseMs: LEASE_MS }));
          claims++;
          const counts = await runningCounts();
          for (const [key, max] of Object.entries(LIMITS)) {
            const n = counts[key] ?? 0;
            peak[key] = Math.max(peak[key] ?? 0, n);
            if (n > max) violations.push(`${key} had ${n} running (cap ${max}) after a claim by ${workerId}`);
          }
          if (claimed.length === 0) {
            if ((await count(jobs, `state <> 'succeeded'`)) === 0) return;
            continue;
          }
          await store.jobCompleteMany({ workerId, outcomes: claimed.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
        }
      }),
    );

    expect(violations).toEqual([]);
    // The caps were reached, so the claimers contended rather than found an idle queue.
    expect(peak['key:tenant-a']).toBe(LIMITS['key:tenant-a']);
    expect(peak['key:tenant-b']).toBe(LIMITS['key:tenant-b']);
    expect(claims).toBeGreaterThan(80);
    expect(await count(jobs, `state = 'succeeded'`)).toBe(240);
    expect(busy).toEqual([]);
  }, 120_000);
});

describe('rate limits under concurrent claimers on MySQL (MariaDB)', () => {
  // Eight nodes race for rate-limited jobs on the database's clock. Claimers 0 and 1 "crash" now
  // and then: they take jobs on a short lease and never report, so those leases lapse and are
  // reclaimed, and both starts count. Afterwards every start is read from the transition log (a
  // `running` entry, stamped with the claim's instant, as the start it used is) and every window
  // that begins at a start is checked.
  const WINDOW_MS = 250;
  const RATES = { 'key:tenant-a': 3, 'key:tenant-b': 5, 'queue:rated': 4 } as const;
  const JOBS = 90;

  /** The most starts any window of WINDOW_MS holds; each window worth checking begins at a start. */
  const busiestWindow = (starts: readonly number[]) => {
    let most = 0;
    for (let i = 0, j = 0; i < starts.length; i++) {
      while (j < starts.length && starts[j]! < starts[i]! + WINDOW_MS) j++;
      most = Math.max(most, j - i);
    }
    return most;
  };

  it(`never lets a window hold more than its max starts with ${CLAIMERS} claimers racing and crashing`, async () => {
    const nodes = await cluster(CLAIMERS, 'rate');
    const [{ store: setup }] = nodes as [MariadbNode];
    const { jobs, history } = setup.naming;
    await setup.rateLimitSet({ target: { key: 'tenant-a' }, rate: { max: RATES['key:tenant-a'], perMs: WINDOW_MS } });
    await setup.rateLimitSet({ target: { key: 'tenant-b' }, rate: { max: RATES['key:tenant-b'], perMs: WINDOW_MS } });
    await setup.rateLimitSet({ target: { queue: 'rated' }, rate: { max: RATES['queue:rated'], perMs: WINDOW_MS } });
    const inputs: EnqueueInput[] = [];
    for (let i = 0; i < JOBS; i++) {
      const key = ['tenant-a', 'tenant-b', undefined][i % 3];
      inputs.push({ name: 'rated', queue: i % 2 === 0 ? 'rated' : 'default', payload: i, maxAttempts: 10, ...(key ? { concurrencyKey: key } : {}) });
    }
    await setup.jobEnqueueMany({ jobs: inputs });

    let claims = 0;
    let abandoned = 0;
    const busy: string[] = [];
    await Promise.all(
      nodes.map(async ({ store }, index) => {
        const workerId = `claimer-${index}`;
        for (;;) {
          // One claim in nine by claimers 0 and 1 is a crash: a short lease, never renewed or reported.
          const crash = index < 2 && claims % 9 === 0;
          const claimed = await claimOrBusy(busy, () => store.jobClaim({ workerId, limit: 3, queues: ['default', 'rated'], leaseMs: crash ? 50 : LEASE_MS }));
          claims++;
          if (claimed.length === 0) {
            if ((await count(jobs, `state <> 'succeeded'`)) === 0) return;
            continue;
          }
          if (crash) {
            abandoned += claimed.length;
            continue;
          }
          await store.jobCompleteMany({ workerId, outcomes: claimed.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
        }
      }),
    );

    const rows = (await admin.query(
      `SELECT k, at FROM (
         SELECT CONCAT('queue:', j.queue) AS k, DATE_FORMAT(h.at, '%Y-%m-%d %H:%i:%s.%f') AS at FROM ${history} h JOIN ${jobs} j ON j.id = h.job_id WHERE h.state = 'running'
         UNION ALL
         SELECT CONCAT('key:', CAST(j.concurrency_key AS CHAR CHARACTER SET utf8mb4)), DATE_FORMAT(h.at, '%Y-%m-%d %H:%i:%s.%f') FROM ${history} h JOIN ${jobs} j ON j.id = h.job_id
          WHERE h.state = 'running' AND j.concurrency_key IS NOT NULL
       ) starts ORDER BY at`,
    )) as { k: string; at: string }[];
    const starts = new Map<string, number[]>();
    for (const row of rows) starts.set(row.k, [...(starts.get(row.k) ?? []), fromMysqlInstant(row.at).getTime()]);
    const busiest = Object.fromEntries(Object.keys(RATES).map((key) => [key, busiestWindow(starts.get(key) ?? [])]));
    // Exact: every window holds at most the max, and the busiest holds exactly the max, so the
    // limit was reached (the claimers contended) rather than never approached.
    expect(busiest).toEqual(RATES);
    // Lapsed leases were reclaimed, and those reclaims were starts the windows counted.
    expect(abandoned).toBeGreaterThan(0);
    expect(await count(jobs, 'attempt > 1')).toBeGreaterThan(0);
    const counted = Object.keys(RATES).reduce((sum, key) => sum + (starts.get(key)?.length ?? 0), 0);
    const limitedStarts = await count(`${history} h JOIN ${jobs} j ON j.id = h.job_id`, `h.state = 'running' AND (j.queue = 'rated' OR j.concurrency_key IS NOT NULL)`);
    expect(counted).toBeGreaterThanOrEqual(limitedStarts);
    expect(await count(jobs, `state = 'succeeded'`)).toBe(JOBS);
    expect(busy).toEqual([]);
  }, 120_000);
});

describe('claims under SKIP LOCKED on MySQL (MariaDB)', () => {
  it(`claims every due job exactly once with ${CLAIMERS} nodes claiming at once`, async () => {
    const nodes = await cluster(CLAIMERS, 'once');
    const [{ store: setup }] = nodes as [MariadbNode];
    const { jobs, history } = setup.naming;
    const JOBS = 400;
    const enqueued = await setup.jobEnqueueMany({ jobs: Array.from({ length: JOBS }, (_, i) => ({ name: 'once', payload: i, priority: (i % 3) - 1 })) });
    const claimedBy = new Map<string, string[]>();
    await Promise.all(
      nodes.map(async ({ store }, index) => {
        const workerId = `claimer-${index}`;
        for (;;) {
          // Leases outlive the test, so nothing is claimed twice by lapsing: a second claim would be a double claim.
          const claimed = await store.jobClaim({ workerId, limit: 7, queues: ['default'], leaseMs: LEASE_MS });
          if (claimed.length === 0) return;
          for (const job of claimed) claimedBy.set(job.id, [...(claimedBy.get(job.id) ?? []), workerId]);
        }
      }),
    );
    const twice = [...claimedBy].filter(([, by]) => by.length > 1);
    expect(twice).toEqual([]);
    expect([...claimedBy.keys()].sort()).toEqual(enqueued.map((r) => r.id).sort());
    expect(await count(jobs, `state = 'running' AND attempt = 1`)).toBe(JOBS);
    expect(await count(history, `state = 'running'`)).toBe(JOBS);
    // Every node took a share: they claimed side by side, not one after another.
    expect(new Set([...claimedBy.values()].flat()).size).toBe(CLAIMERS);
  }, 60_000);

  it('skips rows another transaction has locked instead of waiting for them', async () => {
    const store = await openStore();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await store.jobEnqueue({ job: { name: 'lock', payload: i } })).id);
    const blocker = await hostTransaction(admin);
    await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [ids[0]]);
    // The server says whether the claim waits for the locked row: it either finishes, or shows up
    // waiting on a lock of the jobs table. No timer decides it.
    const claim = tracked(store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 30_000 }));
    expect(await untilLockWait(admin, store.naming.jobs, claim.isDone)).toBe(false);
    expect((await claim.promise).map((j) => j.id)).toEqual([ids[1], ids[2]]);
    await end(blocker, 'rollback');
    const [last] = await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 30_000 });
    expect(last?.id).toBe(ids[0]);
  });

  /** Three due jobs, the first leased by a claim on another node that has not committed yet. */
  async function claimInFlight(store: MysqlJobStore) {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await store.jobEnqueue({ job: { name: 'flight', payload: i } })).id);
    // Stand-in for a claim caught between its write and its COMMIT: the row leased, uncommitted.
    const claimer = await hostTransaction(admin);
    await claimer.query(
      `UPDATE ${store.naming.jobs} SET state = 'running', attempt = 1, worker_id = 'other', leased_until = UTC_TIMESTAMP(3) + INTERVAL 1 MINUTE WHERE id = ?`,
      [ids[0]],
    );
    return { ids, claimer };
  }

  it('takes the other jobs without waiting for a claim in flight on another node', async () => {
    const store = await openStore();
    const { ids, claimer } = await claimInFlight(store);
    const claim = tracked(store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 30_000 }));
    const waited = await untilLockWait(admin, store.naming.jobs, claim.isDone);
    await end(claimer, 'commit');
    expect((await claim.promise).map((j) => j.id)).toEqual([ids[1], ids[2]]);
    expect(waited).toBe(false);
  });

  it('lists jobs without waiting for a claim in flight on another node', async () => {
    const store = await openStore();
    const { ids, claimer } = await claimInFlight(store);
    const list = tracked(store.jobList({ limit: 10 }));
    const waited = await untilLockWait(admin, store.naming.jobs, list.isDone);
    await end(claimer, 'commit');
    expect((await list.promise).map((j) => j.id).sort()).toEqual([...ids].sort());
    expect(waited).toBe(false);
  });
});

describe('unique keys under concurrent writers on MySQL (MariaDB)', () => {
  // The interleaving is forced: one transaction holds its keyed insert uncommitted, the second
  // enqueue is started and seen waiting on the key's lock row, and only then does the first commit
  // or roll back.
  const keyed = (extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ name: 'digest.send', payload: { v: 1 }, uniqueKey: 'user:42', ...extra });

  /** Settles a promise into a value the test can inspect later, and says whether it has settled. */
  function track<T>(promise: Promise<T>) {
    const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
    const done = promise.then(
      (value) => Object.assign(state, { settled: true, value }),
      (error: unknown) => Object.assign(state, { settled: true, error }),
    );
    return { state, done };
  }

  /** Resolves once `n` transactions wait on the store's named locks (the unique keys' rows). */
  async function keyLockWaiters(store: MysqlJobStore, n: number, settled: () => boolean): Promise<void> {
    while ((await lockWaiters(admin, store.naming.locks)) !== n) {
      if (settled()) throw new Error('the enqueue settled without waiting on the key');
    }
  }

  it('a second enqueue of a key another transaction holds uncommitted waits, then returns that job once it commits', async () => {
    const store = await openStore();
    const host = await hostTransaction();
    const first = await store.jobEnqueue({ job: keyed(), manager: host.manager });
    expect(first.created).toBe(true);
    const second = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 } }) }));
    await keyLockWaiters(store, 1, () => second.state.settled);
    expect(second.state.settled).toBe(false);
    await end(host, 'commit');
    await second.done;
    expect(second.state.error).toBeUndefined();
    expect(second.state.value).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
    expect(await count(store.naming.jobs)).toBe(1);
  });

  it('the key is free again for the waiting enqueue when the first transaction rolls back', async () => {
    const store = await openStore();
    const host = await hostTransaction();
    const first = await store.jobEnqueue({ job: keyed(), manager: host.manager });
    const second = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 } }) }));
    await keyLockWaiters(store, 1, () => second.state.settled);
    await end(host, 'rollback');
    await second.done;
    expect(second.state.value).toMatchObject({ created: true });
    expect((second.state.value as { id: string }).id).not.toBe(first.id);
    expect(await store.jobGet({ jobId: first.id })).toBeNull();
    expect(await count(store.naming.jobs)).toBe(1);
  });

  it('two host transactions enqueueing one key: the second waits for the first and then sees its job', async () => {
    const store = await openStore();
    const a = await hostTransaction();
    const b = await hostTransaction();
    const first = await store.jobEnqueue({ job: keyed(), manager: a.manager });
    const second = track(store.jobEnqueue({ job: keyed(), manager: b.manager }));
    await keyLockWaiters(store, 1, () => second.state.settled);
    await end(a, 'commit');
    await second.done;
    expect(second.state.value).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
    await end(b, 'commit');
    expect(await count(store.naming.jobs)).toBe(1);
  });

  it('replace keeps a holder that a claim took while the replacing enqueue waited for its row', async () => {
    const store = await openStore();
    const holder = await store.jobEnqueue({ job: keyed({ delayMs: 60_000 }) });
    // Stand-in for a claim caught mid-flight: the row is locked and marked started, uncommitted.
    const claimer = await hostTransaction(admin);
    await claimer.query(
      `UPDATE ${store.naming.jobs} SET state = 'running', attempt = 1, worker_id = 'w', leased_until = UTC_TIMESTAMP(3) + INTERVAL 1 MINUTE WHERE id = ?`,
      [holder.id],
    );
    const replace = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 }, uniqueKeyMode: 'replace' }) }));
    expect(await untilLockWait(admin, store.naming.jobs, () => replace.state.settled)).toBe(true);
    await end(claimer, 'commit');
    await replace.done;
    expect(replace.state.value).toEqual({ id: holder.id, created: false, deduplicated: 'kept' });
    expect(await store.jobGet({ jobId: holder.id })).toMatchObject({ state: 'running', attempt: 1, payload: { v: 1 } });
  });

  it('a replay waits for an uncommitted enqueue of its key, and is refused once that enqueue commits', async () => {
    const store = await openStore();
    const old = (await store.jobEnqueue({ job: keyed({ maxAttempts: 1 }) })).id;
    const [claimed] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: claimed!.id, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
    const host = await hostTransaction();
    const newer = await store.jobEnqueue({ job: keyed(), manager: host.manager });
    const replay = track(store.jobReplay({ jobId: old }));
    await keyLockWaiters(store, 1, () => replay.state.settled);
    await end(host, 'commit');
    await replay.done;
    expect(replay.state.error).toBeInstanceOf(IllegalTransitionError);
    expect(String((replay.state.error as Error).message)).toContain(`while job ${newer.id} holds its unique key`);
    expect(await store.jobGet({ jobId: old })).toMatchObject({ state: 'dead_lettered' });
  });

  it('twenty enqueues of one key at once, on the store\'s four sessions and from four nodes, make one job and all return it', async () => {
    const nodes = await cluster(4, 'uniq');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => nodes[i % 4]!.store.jobEnqueue({ job: keyed({ payload: { i } }) })));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await count(nodes[0]!.store.naming.jobs)).toBe(1);
  });

  it('a plain enqueue takes no key lock; a keyed one locks its key, looks up the holder, then inserts', async () => {
    const texts: string[] = [];
    const store = await openStore({ onStatement: (text) => texts.push(...text.split(';\n')) });
    texts.length = 0;
    await store.jobEnqueue({ job: { name: 'plain', payload: 1 } });
    expect(texts.filter((t) => t.includes(store.naming.locks) || /unique_key\) IN/.test(t))).toEqual([]);
    texts.length = 0;
    await store.jobEnqueue({ job: keyed() });
    const steps = texts.map((t) => (t.includes(`INSERT INTO ${store.naming.locks}`) ? 'lock' : /live_unique_key\) IN/.test(t) ? 'holder' : t.startsWith(`INSERT INTO ${store.naming.jobs}`) ? 'insert' : null));
    expect(steps.filter((s) => s !== null)).toEqual(['lock', 'holder', 'insert']);
  });
});

describe("a dependant and its parent's outcome write serialize on MySQL (MariaDB)", () => {
  async function runningParent(store: MysqlJobStore, queue = 'default') {
    const { id } = await store.jobEnqueue({ job: { name: 'parent', payload: {}, queue } });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: [queue], leaseMs: LEASE_MS });
    expect(job!.id).toBe(id);
    return id;
  }

  it('an outcome write in flight when the dependant is enqueued: the enqueue waits for it and starts the dependant released', async () => {
    const store = await openStore();
    const parent = await runningParent(store);
    const holder = await hostTransaction(admin);
    // The parent's success, written and not yet committed (its settling already ran, seeing no
    // dependant), with the parent's guard held first, as every write that ends a job holds it.
    await holder.query(`SELECT bucket FROM ${store.naming.locks} WHERE space = 'parent' AND bucket = ? FOR UPDATE`, [guardBucket(parent)]);
    await holder.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [parent]);
    await holder.query(`UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = UTC_TIMESTAMP(3) WHERE id = ?`, [parent]);
    const enqueue = tracked(store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] } }));
    expect(await untilLockWait(admin, store.naming.locks, enqueue.isDone)).toBe(true);
    await end(holder, 'commit');
    const { id } = await enqueue.promise;
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await admin.query(`SELECT settled FROM ${store.naming.dependencies} WHERE child_id = ?`, [id])).toEqual([{ settled: 1 }]);
  });

  /**
   * A dependant enqueued in a transaction still open, then its parent's success: the outcome write
   * must wait for that transaction (checked), and is applied once it commits.
   */
  async function outcomeBehindOpenEnqueue(store: MysqlJobStore) {
    const parent = await runningParent(store);
    const hold = gate();
    const inserted = gate();
    let child = '';
    const host = dataSource.transaction(async (manager: EntityManager) => {
      child = (await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] }, manager })).id;
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded' }] }));
    // It waits on the parent's guard, which the enqueue holds shared (mysql-locks.ts).
    const waited = await untilLockWait(admin, store.naming.locks, outcome.isDone);
    hold.open();
    await host;
    expect(await outcome.promise).toMatchObject([{ status: 'applied', state: 'succeeded' }]);
    expect(waited).toBe(true);
    return { parent, child };
  }

  it("a dependant enqueued in a transaction still open: the parent's outcome write waits for it and then releases the dependant", async () => {
    const store = await openStore();
    const { child } = await outcomeBehindOpenEnqueue(store);
    expect(await store.jobGet({ jobId: child })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it("under the lean finish, a parent whose outcome write waited for a dependant's enqueue still open is kept, and releases it", async () => {
    const store = await openStore({ finish: 'lean' });
    const { parent, child } = await outcomeBehindOpenEnqueue(store);
    expect(await store.jobGet({ jobId: parent })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: child })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('a transaction holding one parent that enqueues a dependant of two while one outcome batch finishing both waits for it: every write ends, and every dependant is released', async () => {
    const store = await openStore();
    // UUIDv7 ids grow with time, so p1 < p2, and the batch below locks p1 before it reaches p2.
    const p1 = await runningParent(store);
    const p2 = await runningParent(store);
    expect(p1 < p2).toBe(true);
    const hold = gate();
    const first = gate();
    const children: string[] = [];
    const host = dataSource.transaction(async (manager: EntityManager) => {
      children.push((await store.jobEnqueue({ job: { name: 'child', payload: 1, dependsOn: [p2] }, manager })).id);
      first.open();
      await hold.opened;
      // The batch holds p1 while it waits for p2, which this transaction holds: a wait for p1 here
      // closes a cycle, which the server breaks by rolling one side back; that side must not be lost.
      children.push((await store.jobEnqueue({ job: { name: 'child', payload: 2, dependsOn: [p1, p2] }, manager })).id);
    });
    await first.opened;
    const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [p1, p2].map((jobId) => ({ jobId, attempt: 1, kind: 'succeeded' as const })) }));
    expect(await untilLockWait(admin, store.naming.locks, outcome.isDone)).toBe(true);
    hold.open();
    await host;
    expect(await outcome.promise).toMatchObject([{ status: 'applied' }, { status: 'applied' }]);
    expect(await store.jobGet({ jobId: p1 })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: p2 })).toMatchObject({ state: 'succeeded' });
    for (const id of children) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it("a due parent that a dependant's enqueue holds is still claimed at once", async () => {
    const store = await openStore();
    const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: {}, queue: 'deps' } });
    const hold = gate();
    const inserted = gate();
    const host = dataSource.transaction(async (manager: EntityManager) => {
      await store.jobEnqueue({ job: { name: 'child', payload: {}, queue: 'deps', dependsOn: [parent] }, manager });
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    try {
      expect((await store.jobClaim({ workerId: 'w', limit: 1, queues: ['deps'], leaseMs: LEASE_MS }))[0]?.id).toBe(parent);
    } finally {
      hold.open();
      await host;
    }
  });

  it('dependants enqueued from two nodes while two others finish their parents are all released, none left awaiting a parent that ended', async () => {
    const seed = Number(process.env.RACE_SEED ?? Date.now() % 1_000_000);
    // A small LCG: the seed alone decides which parents each dependant names.
    let state = seed;
    const next = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const [a, b, c, d] = await cluster(4, 'deps');
    const PARENTS = 40;
    const parents: JobRecord[] = [];
    await a!.store.jobEnqueueMany({ jobs: Array.from({ length: PARENTS }, (_, i) => ({ name: 'parent', payload: i, queue: 'parents' })) });
    while (parents.length < PARENTS) parents.push(...(await a!.store.jobClaim({ workerId: 'w', limit: PARENTS, queues: ['parents'], leaseMs: LEASE_MS })));
    const plans = Array.from({ length: 60 }, () => [...new Set([0, 1, 2].slice(0, 1 + Math.floor(next() * 3)).map(() => parents[Math.floor(next() * PARENTS)]!.id))]);
    const children: string[] = [];
    const enqueuers = [c!, d!].map(async (node, n) => {
      for (const [i, dependsOn] of plans.entries()) {
        if (i % 2 !== n) continue;
        // Every other one in a host transaction of the node's own, the rest in the store's.
        const job = { name: 'child', payload: i, queue: 'children', dependsOn };
        const { id } = i % 4 < 2 ? await node.dataSource.transaction((manager) => node.store.jobEnqueue({ job, manager })) : await node.store.jobEnqueue({ job });
        children.push(id);
      }
    });
    const finishers = [a!, b!].map(async (node, n) => {
      for (const [i, parent] of parents.entries()) {
        if (i % 2 !== n) continue;
        expect(await node.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent.id, attempt: 1, kind: 'succeeded' }] })).toMatchObject([{ status: 'applied' }]);
      }
    });
    await Promise.all([...enqueuers, ...finishers]);
    const { jobs } = a!.store.naming;
    const stuck = (await admin.query(`SELECT id, pending_parents FROM ${jobs} WHERE queue = 'children' AND (state <> 'scheduled' OR pending_parents <> 0)`)) as unknown[];
    expect({ seed, stuck }).toEqual({ seed, stuck: [] });
    expect(children).toHaveLength(plans.length);
    expect(await count(a!.store.naming.dependencies, 'settled = FALSE')).toBe(0);
  }, 60_000);
});
