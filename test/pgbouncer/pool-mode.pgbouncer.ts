import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { StoreUnavailableError } from '../../lib/core/index.js';
import { PostgresJobStore, type PostgresJobStoreOptions } from '../../lib/store/index.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { databaseUrl, dropSchemas, uniqueSchema } from '../support/postgres.js';

// Issue 37 item 3: what `poolMode: 'transaction'` changes, through a real PgBouncer in transaction
// mode with two server connections, so the test can say which one a transaction gets: PgBouncer
// hands an idle client the server connection used last, and another while that one is busy.

let bouncer: PgBouncer;
let admin: DataSource;
const schemas: string[] = [];
const dataSources: DataSource[] = [];
const stores: PostgresJobStore[] = [];

beforeAll(async () => {
  bouncer = await startPgBouncer(databaseUrl(), { poolSize: 2 });
  admin = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 2 } }).initialize();
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(dataSources.map((dataSource) => dataSource.destroy()));
  await dropSchemas(admin, schemas);
  await admin.destroy();
  await bouncer.stop();
});

/** A migrated store on a DataSource of `max` connections through PgBouncer. */
async function storeThroughBouncer(options: Omit<PostgresJobStoreOptions, 'dataSource'> = {}, max = 1): Promise<PostgresJobStore> {
  const dataSource = await new DataSource({ type: 'postgres', url: bouncer.url, extra: { max } }).initialize();
  dataSources.push(dataSource);
  const schema = uniqueSchema('bouncer');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema, ...options });
  stores.push(store);
  await store.migrate();
  return store;
}

/** Runs `work` while another client holds a transaction open on the server connection used last. */
async function whileLastServerConnectionBusy<T>(work: () => Promise<T>): Promise<T> {
  const other = new pg.Client({ connectionString: bouncer.url });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT 1');
    return await work();
  } finally {
    await other.query('COMMIT').catch(() => undefined);
    await other.end();
  }
}

describe('the PostgreSQL store behind PgBouncer in transaction mode', () => {
  it('without poolMode, says what is wrong when a prepared statement reaches another server connection', async () => {
    const store = await storeThroughBouncer();
    const { id } = await store.jobEnqueue({ job: { name: 'bounced', payload: {} } });
    expect(await store.jobGet({ jobId: id })).toMatchObject({ id });
    const failed = await whileLastServerConnectionBusy(() => store.jobGet({ jobId: id }).then(() => null, (error: unknown) => error));
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toBe(
      "A statement the store prepared on one server session reached another: the DataSource's connections go through a pooler in transaction mode (PgBouncer pool_mode = transaction); give the store poolMode: 'transaction' (docs/operations.md#pgbouncer).",
    );
  });

  it('without poolMode, refuses at migrate a pool that goes through a transaction pooler, before it writes anything', async () => {
    const dataSource = await new DataSource({ type: 'postgres', url: bouncer.url, extra: { max: 2 } }).initialize();
    dataSources.push(dataSource);
    const schema = uniqueSchema('bouncer');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema });
    stores.push(store);
    const failed = await store.migrate().then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toBe(
      "The DataSource's connections go through a pooler in transaction mode (one connection's statements ran in two server sessions); give the store poolMode: 'transaction' (docs/operations.md#pgbouncer).",
    );
    const created = (await admin.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1`, [schema])) as [{ n: number }];
    expect(created[0].n).toBe(0);
    // Told, the same pool migrates.
    const told = new PostgresJobStore({ dataSource, schema, poolMode: 'transaction' });
    stores.push(told);
    await told.migrate();
    expect(await told.schemaVersion()).toBeGreaterThan(0);
  });

  it('without poolMode, gives the check up when the pooler has no server connection to spare, and leaves no transaction open', async () => {
    // One server connection: while the check's second connection holds it in a transaction, the
    // first connection's read waits in PgBouncer's queue. The check stops waiting, checks nothing,
    // and destroys both connections rather than hand one back inside its transaction.
    const narrow = await startPgBouncer(databaseUrl(), { poolSize: 1 });
    const dataSource = await new DataSource({ type: 'postgres', url: narrow.url, extra: { max: 2 } }).initialize();
    try {
      const schema = uniqueSchema('bouncer');
      schemas.push(schema);
      const store = new PostgresJobStore({ dataSource, schema });
      await store.migrate();
      expect(await store.schemaVersion()).toBeGreaterThan(0);
      await store.close();
      const open = (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND query = 'SELECT 1'`)) as [{ n: number }];
      expect(open[0].n).toBe(0);
    } finally {
      await dataSource.destroy();
      await narrow.stop();
    }
  });

  it("with poolMode: 'transaction', sends unprepared statements that any server connection runs", async () => {
    const store = await storeThroughBouncer({ poolMode: 'transaction' });
    const { id } = await store.jobEnqueue({ job: { name: 'bounced', payload: {} } });
    expect(await store.jobGet({ jobId: id })).toMatchObject({ id });
    expect(await whileLastServerConnectionBusy(() => store.jobGet({ jobId: id }))).toMatchObject({ id, state: 'scheduled' });
  });

  it('polls alone without listenUrl: hints reach this process only, and no connection sits in LISTEN', async () => {
    const store = await storeThroughBouncer({ poolMode: 'transaction' }, 4);
    expect(store.capabilities.wakeHints).toBe('process');
    const hints: string[] = [];
    let heard!: () => void;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const subscription = await store.subscribeWakeHints({ listener: (queue) => (hints.push(queue), heard()) });
    try {
      expect(subscription.connection).toBeUndefined();
      await store.jobEnqueue({ job: { name: 'bounced', payload: {} } });
      await arrived;
      expect(hints.length).toBeGreaterThan(0);
      const listening = (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE $1`, [`%${store.naming.channel}%`])) as [{ n: number }];
      expect(listening[0].n).toBe(0);
    } finally {
      await subscription.close();
    }
  });

  it('listens straight to the server with listenUrl, and hears a job another process enqueued through PgBouncer', async () => {
    const listening = await storeThroughBouncer({ poolMode: 'transaction', listenUrl: databaseUrl() }, 4);
    expect(listening.capabilities.wakeHints).toBe('cluster');
    const schema = listening.naming.schema;
    const other = await (async () => {
      const dataSource = await new DataSource({ type: 'postgres', url: bouncer.url, extra: { max: 2 } }).initialize();
      dataSources.push(dataSource);
      const store = new PostgresJobStore({ dataSource, schema, poolMode: 'transaction' });
      stores.push(store);
      return store;
    })();
    const hints: string[] = [];
    let heard!: () => void;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const connected = listening.wakeListener.nextConnection();
    const subscription = await listening.subscribeWakeHints({ listener: (queue) => (hints.push(queue), queue === 'far' && heard()) });
    try {
      await connected;
      expect(subscription.connection).toBe('connected');
      await other.jobEnqueue({ job: { name: 'bounced', payload: {}, queue: 'far' } });
      await arrived;
      expect(hints).toContain('far');
    } finally {
      await subscription.close();
    }
  });

  it('refuses a listenUrl outside transaction mode, or one that is no connection string, without repeating it', async () => {
    const dataSource = dataSources[0]!;
    expect(() => new PostgresJobStore({ dataSource, listenUrl: databaseUrl() })).toThrow(
      "listenUrl only applies with poolMode: 'transaction'; in session mode the store listens on the DataSource's own connections.",
    );
    expect(() => new PostgresJobStore({ dataSource, poolMode: 'transaction', listenUrl: 'secret-password@db' })).toThrow(
      /^listenUrl must be a postgres:\/\/ or postgresql:\/\/ connection string straight to the server\.$/,
    );
    expect(() => new PostgresJobStore({ dataSource, poolMode: 'statement' as never })).toThrow('poolMode must be "session" or "transaction", got "statement".');
    expect(() => new PostgresJobStore({ dataSource, preparedStatements: 'no' as never })).toThrow('preparedStatements must be true or false, got "no".');
  });
});
