import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { PostgresJobStore, type EnqueueInput } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// A debounce on PostgreSQL reads its holder, then rewrites it; a claim takes no unique-key lock, so
// it can take the holder in between. The interleaving is forced: a claim's write of the holder is
// held uncommitted, the debounce is started and seen waiting on that row in pg_locks, and only then
// does the claim commit.
const schemas: string[] = [];
let dataSource: DataSource;

beforeAll(async () => {
  dataSource = await openPostgresDataSource(4);
});
afterAll(async () => {
  await dropSchemas(dataSource, schemas);
  await dataSource.destroy();
});

async function openStore(): Promise<PostgresJobStore> {
  const schema = uniqueSchema('win');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  return store;
}

const debounced = (v: number): EnqueueInput => ({ name: 'search.reindex', payload: { v }, debounce: { key: 'doc:7', windowMs: 10_000 } });

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('issue 39 item 4: a debounce whose holder is claimed meanwhile, on PostgreSQL', () => {
  it('inserts the debounced job after all, so its payload runs after the run that started with the old one', async () => {
    const store = await openStore();
    const holder = await store.jobEnqueue({ job: debounced(1) });
    const claim = dataSource.createQueryRunner();
    await claim.connect();
    try {
      await claim.startTransaction();
      // What a claim writes, held uncommitted: the holder is running its first attempt.
      await claim.query(
        `UPDATE ${store.naming.jobs} SET state = 'running', attempt = 1, worker_id = 'w', leased_until = now() + interval '30 seconds' WHERE id = $1`,
        [holder.id],
      );
      const debounce = store.jobEnqueue({ job: debounced(2) });
      await until('the debounce waits on the holder row', async () => {
        const [row] = await dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%replaced AS%'`);
        return row.n === 1;
      });
      await claim.commitTransaction();
      const result = await debounce;
      expect(result.created).toBe(true);
      expect(result.id).not.toBe(holder.id);
      expect(await store.jobGet({ jobId: holder.id })).toMatchObject({ state: 'running', payload: { v: 1 } });
      const fallback = await store.jobGet({ jobId: result.id });
      expect(fallback).toMatchObject({ state: 'scheduled', attempt: 0, payload: { v: 2 }, window: { kind: 'debounce', key: 'doc:7' } });
      // The fallback is now the key's holder.
      expect(await store.jobEnqueue({ job: debounced(3) })).toEqual({ id: result.id, created: false, deduplicated: 'debounced' });
    } finally {
      await claim.release();
    }
  });
});

describe('issue 39 item 4: windows in a host transaction at REPEATABLE READ, on PostgreSQL', () => {
  it('a debounce whose snapshot predates another commit of its key fails on the index instead of adding a second pending job', async () => {
    const store = await openStore();
    const host = dataSource.createQueryRunner();
    await host.connect();
    try {
      await host.startTransaction('REPEATABLE READ');
      await host.query('SELECT 1'); // the snapshot is taken here
      const other = await store.jobEnqueue({ job: debounced(1) });
      expect(other.created).toBe(true);
      await expect(store.jobEnqueue({ job: debounced(2), manager: host.manager })).rejects.toThrow(/jobs_debounce_idx/);
      await host.rollbackTransaction();
      const [row] = await dataSource.query(`SELECT count(*)::int AS n FROM ${store.naming.jobs} WHERE window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0`);
      expect(row.n).toBe(1);
    } finally {
      await host.release();
    }
  });

  it('a throttle is refused in one sentence before anything is written; at READ COMMITTED it sees the open window', async () => {
    const store = await openStore();
    const throttled = { name: 'alert.send', payload: 1, throttle: { key: 'host:a', windowMs: 60_000 } };
    const opener = await store.jobEnqueue({ job: throttled });
    const host = dataSource.createQueryRunner();
    await host.connect();
    try {
      await host.startTransaction('REPEATABLE READ');
      await expect(store.jobEnqueue({ job: throttled, manager: host.manager })).rejects.toThrow(
        new InvalidArgumentError(
          'A throttle enqueue needs its transaction at READ COMMITTED or SERIALIZABLE on PostgreSQL: at REPEATABLE READ it cannot see a window another transaction opened since it began; nothing was written.',
          'manager',
        ),
      );
      await host.rollbackTransaction();
      await host.startTransaction('READ COMMITTED');
      expect(await store.jobEnqueue({ job: throttled, manager: host.manager })).toEqual({ id: opener.id, created: false, deduplicated: 'throttled' });
      await host.commitTransaction();
    } finally {
      await host.release();
    }
  });
});
