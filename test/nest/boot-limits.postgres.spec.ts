import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { SchedulerModule, type SchedulerModuleOptions } from '../../lib/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Two nodes of one cluster booting at the same moment with the same `rateLimits` or `queueLimits`.
// The test holds the limits lock, so the first boot's write waits there with its limit's row
// written and uncommitted; the second boot starts then, reads no limit yet, and its write waits on
// that row. Let go, both finish: the second must find the limit already as it wants it.

let admin: DataSource;
const sources: DataSource[] = [];
const schemas: string[] = [];

beforeAll(async () => {
  admin = await openPostgresDataSource(4);
});
afterAll(async () => {
  await dropSchemas(admin, schemas);
  await Promise.all([admin, ...sources].map((source) => source.destroy()));
});

/** A node: its own pool (another process, in production) on the shared schema. */
async function node(schema: string, options: SchedulerModuleOptions): Promise<INestApplicationContext> {
  const dataSource = await openPostgresDataSource(4);
  sources.push(dataSource);
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new PostgresJobStore({ dataSource, schema }), autoStart: false, migrationsRun: false, queues: ['default', 'mail'], ...options })],
  }).compile();
  return moduleRef.init();
}

async function bootTogether(options: SchedulerModuleOptions): Promise<PostgresJobStore> {
  const schema = uniqueSchema('boots');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource: admin, schema });
  await store.migrate();
  const holder = await admin.createQueryRunner();
  await holder.connect();
  const apps: INestApplicationContext[] = [];
  try {
    await holder.query(`SELECT pg_advisory_lock(${limitsLockId(store.naming)})`);
    const first = tracked(node(schema, options));
    await untilWaiting(admin, 'pg_advisory_xact_lock', first.isDone);
    const second = tracked(node(schema, options));
    // Its write waits for the first one's row (a limit the code before the fix wrote again).
    await untilWaiting(admin, `INSERT INTO "${schema}".`, second.isDone);
    await holder.query(`SELECT pg_advisory_unlock(${limitsLockId(store.naming)})`);
    apps.push(await first.promise, await second.promise);
  } finally {
    await holder.release();
    await Promise.all(apps.map((app) => app.close()));
  }
  return store;
}

describe('issue 35 item 4: nodes booting together set the module limits once', () => {
  it('issue 35 item 4: two boots with the same rateLimits write the rate once and audit it once', async () => {
    const store = await bootTogether({ rateLimits: [{ queue: 'mail', max: 10, perMs: 1_000 }] });
    expect(await store.rateLimitList()).toEqual([{ queue: 'mail', max: 10, perMs: 1_000 }]);
    const audit = await store.auditList({ limit: 10 });
    expect(audit.map((entry) => [entry.actor, entry.action, entry.target, entry.detail])).toEqual([
      ['boot', 'rate_limit.set', 'queue:mail', { rate: { max: 10, perMs: 1_000 } }],
    ]);
    const [{ starts }] = await admin.query(`SELECT count(*)::int AS starts FROM ${store.naming.rateStarts}`);
    expect(starts).toBe(10);
  });

  it('issue 35 item 4: two boots with the same queueLimits write the cap once and audit it once', async () => {
    const store = await bootTogether({ queueLimits: { mail: 3 } });
    expect(await store.concurrencyLimitList()).toEqual([{ queue: 'mail', max: 3 }]);
    const audit = await store.auditList({ limit: 10 });
    expect(audit.map((entry) => [entry.actor, entry.action, entry.target, entry.detail])).toEqual([['boot', 'limit.set', 'queue:mail', { max: 3 }]]);
    const [{ slots }] = await admin.query(`SELECT count(*)::int AS slots FROM ${store.naming.slots}`);
    expect(slots).toBe(3);
  });
});
