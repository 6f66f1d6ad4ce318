import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { SeededRandom } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';
import { databaseUrl, dropSchemas, uniqueSchema } from '../support/postgres.js';

// Issue 37 item 4, the connection budget (docs/operations.md#connections): a node draws every
// connection from its DataSource's pool, so it never uses more server connections than the pool
// holds, and a pool of concurrency + 3 is enough with every slot inside an attempt transaction:
// leases are still renewed and jobs still enqueued. The node runs on manual timers; the handlers
// hold their transactions until the test lets them go.

const CONCURRENCY = 4;
const POOL = CONCURRENCY + 3;
const app = `budget_${process.pid}`;
const schema = uniqueSchema('budget');

describe('the connection budget of a PostgreSQL node', () => {
  let dataSource: DataSource;
  let admin: DataSource;
  beforeAll(async () => {
    dataSource = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: POOL, application_name: app } }).initialize();
    admin = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 1 } }).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  });

  const connections = async () =>
    Number(((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [app])) as [{ n: string }])[0].n);
  const leaseEnds = async () =>
    ((await admin.query(`SELECT leased_until FROM "${schema}".jobs WHERE state = 'running' ORDER BY id`)) as { leased_until: Date }[]).map((r) => r.leased_until.getTime());

  it(`uses at most its pool of ${POOL} at concurrency ${CONCURRENCY} with every slot in an attempt transaction, and still renews leases and enqueues`, async () => {
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const beats: Promise<unknown>[] = [];
    const heartbeat = store.jobHeartbeat.bind(store);
    store.jobHeartbeat = (params) => {
      const beat = heartbeat(params);
      beats.push(beat);
      return beat;
    };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inside = 0;
    let allInside!: () => void;
    const full = new Promise<void>((resolve) => (allInside = resolve));
    const most = { connections: 0 };
    const handler = {
      transaction: true,
      handle: async (_payload: unknown, ctx: { entityManager(): { query(text: string): Promise<unknown> } }) => {
        await ctx.entityManager().query('SELECT 1'); // the attempt's transaction now holds a connection
        if (++inside === CONCURRENCY) allInside();
        await gate;
      },
    };
    const timers = new ManualTimers();
    const worker = new WorkerNode({
      store,
      invoker: new FunctionInvoker({ held: handler as never }),
      options: { scheduling: false, concurrency: CONCURRENCY, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 10_000, leaseMs: 60_000, workerId: 'budget-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(37n),
    });
    await store.jobEnqueueMany({ jobs: Array.from({ length: CONCURRENCY + 2 }, (_, i) => ({ name: 'held', payload: { i } })) });
    await worker.start();
    await full;
    // One per attempt, the heartbeat's and the LISTEN connection at least; never more than the pool.
    most.connections = await connections();
    expect(most.connections).toBeGreaterThanOrEqual(CONCURRENCY + 2);
    expect(most.connections).toBeLessThanOrEqual(POOL);

    // Every slot holds a transaction; the heartbeat's own connection renews all their leases.
    const before = await leaseEnds();
    expect(before).toHaveLength(CONCURRENCY);
    await timers.advance(10_000);
    await Promise.all(beats);
    const after = await leaseEnds();
    after.forEach((end, i) => expect(end).toBeGreaterThan(before[i]!));
    // And the rest of the pool still takes an enqueue.
    await store.jobEnqueue({ job: { name: 'held', payload: { late: true } } });
    most.connections = Math.max(most.connections, await connections());

    release();
    while ((await store.jobList({ state: 'succeeded', limit: 100 })).length < CONCURRENCY + 3) {
      await timers.advance(1_000);
      await settle(5);
      most.connections = Math.max(most.connections, await connections());
    }
    await worker.stop();
    await store.close();
    expect(most.connections).toBeLessThanOrEqual(POOL);
  });
});
