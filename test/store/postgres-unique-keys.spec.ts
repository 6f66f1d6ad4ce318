import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { IllegalTransitionError } from '../../lib/core/index.js';
import { PostgresJobStore, type EnqueueInput } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Concurrent enqueues of one unique key, with the interleaving forced: one transaction holds its
// keyed insert uncommitted on a connection of its own, the second enqueue is started and seen
// waiting on the key's lock in pg_locks, and only then does the first commit or roll back.
const schemas: string[] = [];
let dataSource: DataSource;

beforeAll(async () => {
  dataSource = await openPostgresDataSource(6);
});
afterAll(async () => {
  await dropSchemas(dataSource, schemas);
  await dataSource.destroy();
});

async function openStore(): Promise<PostgresJobStore> {
  const schema = uniqueSchema('uniq');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  return store;
}

const keyed = (extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ name: 'digest.send', payload: { v: 1 }, uniqueKey: 'user:42', ...extra });

/** Transactions of `store` waiting for one of its unique-key locks, read from pg_locks. */
async function keyLockWaiters(store: PostgresJobStore): Promise<number> {
  const [row] = await dataSource.query(
    `SELECT count(*)::int AS n FROM pg_locks
     WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2 AND classid = (hashtext($1)::bigint & 4294967295)::oid`,
    [`${store.naming.lockKey}:unique`],
  );
  return row.n;
}

/** Polls a condition the test is waiting for (bounded, so a regression fails instead of hanging). */
async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function hostTransaction(): Promise<QueryRunner> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  return runner;
}

/** Settles a promise into a value the test can inspect later, and says whether it has settled. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  const done = promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return { state, done };
}

const countJobs = async (store: PostgresJobStore, where = 'true') =>
  Number((await dataSource.query(`SELECT count(*) AS n FROM ${store.naming.jobs} WHERE ${where}`))[0].n);

describe('issue 19 item 9: unique keys under concurrent writers on PostgreSQL', () => {
  it('a second enqueue of a key another transaction holds uncommitted waits, then returns that job once it commits', async () => {
    const store = await openStore();
    const host = await hostTransaction();
    try {
      const first = await store.jobEnqueue({ job: keyed(), manager: host.manager });
      expect(first.created).toBe(true);
      const second = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 } }) }));
      await until('the second enqueue waits on the key', async () => (await keyLockWaiters(store)) === 1);
      expect(second.state.settled).toBe(false);
      await host.commitTransaction();
      await second.done;
      expect(second.state.error).toBeUndefined();
      expect(second.state.value).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
      expect(await countJobs(store)).toBe(1);
    } finally {
      if (host.isTransactionActive) await host.rollbackTransaction();
      await host.release();
    }
  });

  it('the key is free again for the waiting enqueue when the first transaction rolls back', async () => {
    const store = await openStore();
    const host = await hostTransaction();
    try {
      const first = await store.jobEnqueue({ job: keyed(), manager: host.manager });
      const second = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 } }) }));
      await until('the second enqueue waits on the key', async () => (await keyLockWaiters(store)) === 1);
      await host.rollbackTransaction();
      await second.done;
      expect(second.state.value).toMatchObject({ created: true });
      expect((second.state.value as { id: string }).id).not.toBe(first.id);
      expect(await store.jobGet({ jobId: first.id })).toBeNull();
      expect(await countJobs(store)).toBe(1);
    } finally {
      await host.release();
    }
  });

  it('two host transactions enqueueing one key: the second waits for the first and then sees its job', async () => {
    const store = await openStore();
    const a = await hostTransaction();
    const b = await hostTransaction();
    try {
      const first = await store.jobEnqueue({ job: keyed(), manager: a.manager });
      const second = track(store.jobEnqueue({ job: keyed(), manager: b.manager }));
      await until('the second transaction waits on the key', async () => (await keyLockWaiters(store)) === 1);
      await a.commitTransaction();
      await second.done;
      expect(second.state.value).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
      await b.commitTransaction();
      expect(await countJobs(store)).toBe(1);
    } finally {
      for (const runner of [a, b]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }
  });

  it('replace keeps a holder that a claim took while the replacing enqueue waited for its row', async () => {
    const store = await openStore();
    const holder = await store.jobEnqueue({ job: keyed({ delayMs: 60_000 }) });
    // Stand-in for a claim caught mid-flight: the row is locked and marked started, uncommitted.
    const claimer = await hostTransaction();
    try {
      await claimer.query(
        `UPDATE ${store.naming.jobs} SET state = 'running', attempt = 1, worker_id = 'w', leased_until = now() + interval '1 minute' WHERE id = $1`,
        [holder.id],
      );
      const replace = track(store.jobEnqueue({ job: keyed({ payload: { v: 2 }, uniqueKeyMode: 'replace' }) }));
      await until('the replacing enqueue waits for the holder row', async () => {
        const [row] = await dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'transactionid' AND query LIKE '%payload = i.payload%' AND query LIKE $1`,
          [`%${store.naming.jobs}%`],
        );
        return row.n === 1;
      });
      await claimer.commitTransaction();
      await replace.done;
      expect(replace.state.value).toEqual({ id: holder.id, created: false, deduplicated: 'kept' });
      expect(await store.jobGet({ jobId: holder.id })).toMatchObject({ state: 'running', attempt: 1, payload: { v: 1 } });
    } finally {
      if (claimer.isTransactionActive) await claimer.rollbackTransaction();
      await claimer.release();
    }
  });

  it('a replay waits for an uncommitted enqueue of its key, and is refused once that enqueue commits', async () => {
    const store = await openStore();
    const old = (await store.jobEnqueue({ job: keyed({ maxAttempts: 1 }) })).id;
    const [claimed] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: claimed!.id, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
    const host = await hostTransaction();
    try {
      const newer = await store.jobEnqueue({ job: keyed(), manager: host.manager });
      const replay = track(store.jobReplay({ jobId: old }));
      await until('the replay waits on the key', async () => (await keyLockWaiters(store)) === 1);
      await host.commitTransaction();
      await replay.done;
      expect(replay.state.error).toBeInstanceOf(IllegalTransitionError);
      expect(String((replay.state.error as Error).message)).toContain(`while job ${newer.id} holds its unique key`);
      expect(await store.jobGet({ jobId: old })).toMatchObject({ state: 'dead_lettered' });
    } finally {
      if (host.isTransactionActive) await host.rollbackTransaction();
      await host.release();
    }
  });

  it('twenty enqueues of one key at once, on five connections, make one job and all return it', async () => {
    const store = await openStore();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.jobEnqueue({ job: keyed({ payload: { i } }) })));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await countJobs(store)).toBe(1);
  });

  it('a plain enqueue sends the same single statement as before; a keyed one locks, looks up and inserts', async () => {
    const texts: string[] = [];
    const schema = uniqueSchema('uniq');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema, onStatement: (text) => texts.push(text) });
    await store.migrate();
    texts.length = 0;
    await store.jobEnqueue({ job: { name: 'plain', payload: 1 } });
    expect(texts).toHaveLength(1);
    expect(texts[0]).not.toMatch(/unique_key/);
    texts.length = 0;
    await store.jobEnqueue({ job: keyed() });
    expect(texts.filter((t) => !/^\s*(BEGIN|COMMIT)/.test(t)).map((t) => (t.match(/pg_advisory_xact_lock|'holder'|INSERT INTO/) ?? ['?'])[0])).toEqual([
      'pg_advisory_xact_lock',
      "'holder'",
      'INSERT INTO',
    ]);
  });
});
