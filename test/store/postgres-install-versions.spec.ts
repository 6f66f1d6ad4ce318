import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { IncompatibleSchemaError } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import type { PgPool } from '../../lib/store/postgres/pg-executor.js';
import { postgresInstall } from '../../lib/store/postgres/postgres-install.js';
import { limitFunction } from '../../lib/store/postgres/postgres-limits.js';
import { migratePostgres } from '../../lib/store/postgres/postgres-migrator.js';
import { postgresNaming, type PostgresNaming } from '../../lib/store/postgres/postgres-naming.js';
import type { SqlInstall } from '../../lib/store/sql-install.js';
import { loadMigrations } from '../../lib/store/sql-migrations.js';
import { tracked } from '../support/lock-waits.js';
import { uniqueSchema } from '../support/postgres.js';
import { dataSource, schemas, stores, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

// Version N is this code's install under a version one higher than the one it ships with; version
// N−1 knows one migration fewer (no rate limits) and installs an older limits gate, one that sees
// no limit at all. An N−1 node that installed it would let every claim past every limit.

const MIGRATIONS = loadMigrations(fileURLToPath(new URL('../../lib/store/postgres/migrations/', import.meta.url)));
const pool = () => (dataSource.driver as unknown as { master: PgPool }).master;

function versions(naming: PostgresNaming, { compatibleFrom }: { compatibleFrom: 'N' | 'N-1' }) {
  const current = postgresInstall(naming, 'transitions_and_errors');
  const n: SqlInstall = { ...current, version: current.version + 1, compatibleFrom: compatibleFrom === 'N' ? current.version + 1 : current.version };
  const older: SqlInstall = {
    version: current.version,
    compatibleFrom: current.version,
    sql: `CREATE OR REPLACE FUNCTION ${limitFunction(naming, 'limits_gate')}() RETURNS boolean LANGUAGE sql AS 'SELECT false';`,
  };
  return {
    bootN: () => migratePostgres(pool(), naming, n, MIGRATIONS),
    bootOlder: () => migratePostgres(pool(), naming, older, MIGRATIONS.slice(0, -1)),
  };
}

function freshNaming(): PostgresNaming {
  const schema = uniqueSchema('inst');
  schemas.push(schema);
  return postgresNaming(schema);
}

/** Every function and trigger of the installation, with what the database records of its schema and install. */
async function installed(naming: PostgresNaming) {
  return {
    functions: await dataSource.query(
      `SELECT p.proname, md5(pg_get_functiondef(p.oid)) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`,
      [naming.schema],
    ),
    triggers: await dataSource.query(`SELECT tgname, md5(pg_get_triggerdef(oid)) AS def FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY 1`, [
      naming.jobs,
    ]),
    migrations: await dataSource.query(`SELECT version, applied_at FROM ${naming.migrations} ORDER BY version`),
    install: await dataSource.query(`SELECT version, compatible_from, installed_at FROM ${naming.installed}`),
  };
}

/** Whether a rate limit of one start a minute holds against a claim that asks for two. */
async function rateLimitHolds(naming: PostgresNaming): Promise<boolean> {
  const store = new PostgresJobStore({ dataSource, schema: naming.schema });
  stores.push(store);
  await store.rateLimitSet({ target: { key: 'partner' }, rate: { max: 1, perMs: 60_000 } });
  await store.jobEnqueueMany({ jobs: [0, 1].map((n) => ({ name: 'call', payload: n, concurrencyKey: 'partner' })) });
  return (await store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: 60_000 })).length === 1;
}

/** How many sessions wait for the migration lock of `naming`. */
async function migrationLockWaiters(naming: PostgresNaming): Promise<number> {
  const key = `hashtext('${naming.lockKey}')`;
  const [row] = await dataSource.query(
    `SELECT count(*)::int AS n FROM pg_locks
     WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid::bigint = ((${key})::bigint >> 32) & 4294967295 AND objid::bigint = (${key})::bigint & 4294967295`,
  );
  return row.n as number;
}

async function untilMigrationWaiters(naming: PostgresNaming, count: number): Promise<void> {
  while ((await migrationLockWaiters(naming)) < count);
}

describe('issue 35 item 3: a rolling deploy never installs functions older than the schema (PostgreSQL)', () => {
  it('issue 35 item 3: a node of version N−1 booting against a schema of version N changes nothing, and runs with N’s functions', async () => {
    const naming = freshNaming();
    const { bootN, bootOlder } = versions(naming, { compatibleFrom: 'N-1' });
    expect(await bootN()).toEqual(MIGRATIONS.map((m) => m.version));
    const before = await installed(naming);
    expect(await bootOlder()).toEqual([]);
    expect(await installed(naming)).toEqual(before);
    expect(await rateLimitHolds(naming)).toBe(true);
  });

  it('issue 35 item 3: a node of version N−1 refuses to boot, in one sentence and writing nothing, against a schema of version N that rules it out', async () => {
    const naming = freshNaming();
    const { bootN, bootOlder } = versions(naming, { compatibleFrom: 'N' });
    await bootN();
    const before = await installed(naming);
    const refusal = await bootOlder().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(IncompatibleSchemaError);
    expect((refusal as Error).message).toMatch(/^The scheduler tables at schema inst_\S+ were installed by a newer version .*; upgrade this node\.$/);
    // The store this code ships refuses the same way through its public migrate.
    const store = new PostgresJobStore({ dataSource, schema: naming.schema });
    stores.push(store);
    await expect(store.migrate()).rejects.toBeInstanceOf(IncompatibleSchemaError);
    expect(await installed(naming)).toEqual(before);
  });

  it.each([
    ['N−1 first', ['older', 'N']],
    ['N first', ['N', 'older']],
  ] as const)('issue 35 item 3: nodes of versions N and N−1 booting at the same moment leave N installed (%s)', async (_order, order) => {
    const naming = freshNaming();
    const { bootN, bootOlder } = versions(naming, { compatibleFrom: 'N-1' });
    // Both wait for the migration lock the test holds, in the order given, then take turns.
    const holder = await dataSource.createQueryRunner();
    await holder.connect();
    const boots: Record<string, ReturnType<typeof tracked<number[]>>> = {};
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtext($1))`, [naming.lockKey]);
      for (const [i, which] of order.entries()) {
        boots[which] = tracked(which === 'N' ? bootN() : bootOlder());
        await untilMigrationWaiters(naming, i + 1);
      }
      await holder.query(`SELECT pg_advisory_unlock(hashtext($1))`, [naming.lockKey]);
    } finally {
      await holder.release();
    }
    const [ranN, ranOlder] = await Promise.all([boots.N!.promise, boots.older!.promise]);
    const all = MIGRATIONS.map((m) => m.version);
    if (order[0] === 'older') {
      expect([ranOlder, ranN]).toEqual([all.slice(0, -1), all.slice(-1)]);
    } else {
      expect([ranN, ranOlder]).toEqual([all, []]);
    }
    const raced = await installed(naming);
    expect(raced.install).toEqual([expect.objectContaining({ version: postgresInstall(naming, 'off').version + 1 })]);
    // N's SQL is what is installed: N installing it again changes no definition.
    await bootN();
    const again = await installed(naming);
    expect([again.functions, again.triggers]).toEqual([raced.functions, raced.triggers]);
    expect(await rateLimitHolds(naming)).toBe(true);
  });
});
