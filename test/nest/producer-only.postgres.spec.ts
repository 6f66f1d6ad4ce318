import { describe, expect, it } from '@jest/globals';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { SchedulerClient } from '../../lib/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { bootApp, ConfirmOrder, producerOnlyCases, type Boot } from './producer-only.cases.js';

/** Each app has its own DataSource (its own pool), as two services would; they share one schema. */
function postgresEnvironment() {
  const schema = uniqueSchema('producer');
  const producerName = `producer_${randomBytes(4).toString('hex')}`;
  const boot: Boot = (options, providers) =>
    bootApp(
      [TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl(), extra: { max: 20, application_name: options.worker === false ? producerName : 'worker' } })],
      { ...options, schema },
      providers,
    );
  const cleanup = async () => {
    const admin = await openPostgresDataSource(1);
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  };
  return { schema, producerName, boot, cleanup };
}

describe('issue 19 item 14: producer-only apps, on one PostgreSQL schema', () => {
  producerOnlyCases(async () => postgresEnvironment());

  it('issue 19 item 14: a producer-only node sends no LISTEN and holds no lease', async () => {
    const env = postgresEnvironment();
    const producer = await env.boot({ worker: false }, []);
    const admin = await openPostgresDataSource(1);
    try {
      await producer.get(SchedulerClient).enqueue(ConfirmOrder, { orderId: 'o-9' });
      const sessions: Array<{ query: string }> = await admin.query(`SELECT query FROM pg_stat_activity WHERE application_name = $1`, [env.producerName]);
      expect(sessions.length).toBeGreaterThan(0);
      expect(sessions.filter((s) => /^\s*LISTEN/i.test(s.query))).toEqual([]);
      const [{ running }] = await admin.query(`SELECT count(*)::int AS running FROM "${env.schema}".jobs WHERE state = 'running'`);
      expect(running).toBe(0);
    } finally {
      await producer.close();
      await admin.destroy();
      await env.cleanup();
    }
  });
});
