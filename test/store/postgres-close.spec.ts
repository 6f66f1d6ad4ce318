import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { resolveLimits } from '../../lib/core/index.js';
import { CheckedStore } from '../../lib/store/checked/checked-store.js';
import { PostgresDriver } from '../../lib/store/postgres/postgres-driver.js';
import { postgresNaming, type PostgresNaming } from '../../lib/store/postgres/postgres-naming.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { stallNextListen } from '../support/stall-listen.js';

// Closing the store and destroying the host's DataSource, in each order and at once, while the
// store has something in flight. Each in-flight statement is held by a lock the test takes on
// another connection, and the test waits until PostgreSQL shows it waiting. Nothing here may wait
// on that lock: the test lets go of it only after both have ended.

/** What "bounded" means here: far above the store's own waits (none: closeWaitMs is 0 below). */
const BOUND_MS = 15_000;

let admin: DataSource;
const schemas: string[] = [];

beforeAll(async () => {
  admin = await openPostgresDataSource(4);
});
afterAll(async () => {
  await dropSchemas(admin, schemas);
  await admin.destroy();
});

/** The production store's checks and driver, with the driver's waits at close shortened to nothing. */
class ClosingStore extends CheckedStore {
  constructor(readonly pg: PostgresDriver) {
    super(pg);
  }
}

async function migratedSchema(): Promise<PostgresNaming> {
  const schema = uniqueSchema('close');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource: admin, schema });
  await store.migrate();
  await store.close();
  return postgresNaming(schema);
}

/** Resolves to 'ended' when `promise` settles within the bound, 'hung' otherwise. */
async function settles(promise: Promise<unknown>): Promise<'ended' | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), BOUND_MS)));
  const result = await Promise.race([promise.then(() => 'ended' as const, () => 'ended' as const), hung]);
  clearTimeout(timer);
  return result;
}

interface InFlight {
  /** The call in flight, if it is a call of the store's. */
  readonly call?: Promise<unknown>;
  /** Lets the held statement through, once the test is done with it. */
  readonly letGo: () => Promise<void>;
}

/**
 * Starts `call` while another connection holds the jobs table, and returns once PostgreSQL shows
 * the call waiting for it (a heartbeat passes locked rows by, so only the table holds it).
 */
async function heldByTableLock(naming: PostgresNaming, start: () => Promise<unknown>): Promise<InFlight> {
  const holder: QueryRunner = admin.createQueryRunner();
  await holder.connect();
  const letGo = () => holder.rollbackTransaction().finally(() => holder.release());
  try {
    await holder.startTransaction();
    await holder.query(`LOCK TABLE ${naming.jobs} IN ACCESS EXCLUSIVE MODE`);
    const call = tracked(start());
    expect(await untilWaiting(admin, naming.jobs, call.isDone)).toBe(true);
    return { call: call.promise, letGo };
  } catch (error) {
    await letGo();
    throw error;
  }
}

const LEASE_MS = 60_000;

/** Each way the store can have a connection out of the pool when closing starts. */
const inFlight: Record<string, (store: ClosingStore, dataSource: DataSource, naming: PostgresNaming) => Promise<InFlight>> = {
  'an idle heartbeat connection and a LISTEN': async (store) => {
    await store.jobEnqueue({ job: { name: 'held', payload: 1 } });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect((await store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: job!.id, attempt: 1 }], leaseMs: LEASE_MS })).renewed).toHaveLength(1);
    const connected = store.pg.wakeListener.nextConnection();
    await store.subscribeWakeHints({ listener: () => undefined });
    await connected;
    return { letGo: async () => undefined };
  },
  'a heartbeat': async (store, _dataSource, naming) => {
    await store.jobEnqueue({ job: { name: 'held', payload: 1 } });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    return heldByTableLock(naming, () => store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: job!.id, attempt: 1 }], leaseMs: LEASE_MS }));
  },
  'a claim': async (store, _dataSource, naming) => {
    await store.jobEnqueue({ job: { name: 'held', payload: 1 } });
    return heldByTableLock(naming, () => store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS }));
  },
  'a LISTEN': async (store, dataSource) => {
    const stall = stallNextListen(dataSource);
    await store.subscribeWakeHints({ listener: () => undefined });
    await stall.held;
    return { letGo: async () => stall.release() };
  },
};

const orders: Record<string, (store: ClosingStore, dataSource: DataSource) => Promise<Array<'ended' | 'hung'>>> = {
  'the store, then the DataSource': async (store, dataSource) => [await settles(store.close()), await settles(dataSource.destroy())],
  'the DataSource, then the store': async (store, dataSource) => [await settles(dataSource.destroy()), await settles(store.close())],
  'both at once': async (store, dataSource) => {
    const both = await settles(Promise.all([store.close(), dataSource.destroy()]));
    return [both, both];
  },
};

const cases = Object.keys(inFlight).flatMap((what) => Object.keys(orders).map((order) => [order, what] as const));

describe('issue 35 item 6: closing a PostgreSQL store and its DataSource ends, in any order', () => {
  it.each(cases)('issue 35 item 6: closing %s, with %s in flight, ends', async (order, what) => {
    const naming = await migratedSchema();
    const dataSource = await openPostgresDataSource(6);
    const settings = { dataSource, naming, limits: resolveLimits(), historyPolicy: 'transitions_and_errors', finish: 'keep', asyncClaimCommit: false, closeWaitMs: 0 } as const;
    const store = new ClosingStore(new PostgresDriver(settings));
    const held = await inFlight[what]!(store, dataSource, naming);
    try {
      expect(await orders[order]!(store, dataSource)).toEqual(['ended', 'ended']);
      expect(dataSource.isInitialized).toBe(false);
      // The statement that was held fails with its connection; nobody waits on it.
      if (held.call) expect(await settles(held.call)).toBe('ended');
    } finally {
      await held.letGo();
    }
  });
});
