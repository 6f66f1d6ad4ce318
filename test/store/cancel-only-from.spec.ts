import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { IllegalTransitionError } from '../../lib/core/index.js';
import { SqliteJobStore } from '../../lib/store/index.js';
import type { DriverJobCancelParams } from '../../lib/store-kit/index.js';

/**
 * `onlyFrom` is applied by each driver inside its write; CheckedStore checks it again on the row
 * the write locked, so a driver that drops the field still cannot cancel a job that moved.
 */
describe('jobCancel onlyFrom, when a driver ignores it', () => {
  let dataSource: DataSource;
  let store: SqliteJobStore;

  beforeAll(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const driver = (store as unknown as { driver: { jobCancel<R>(params: DriverJobCancelParams<R>): Promise<R> } }).driver;
    const cancel = driver.jobCancel.bind(driver);
    driver.jobCancel = (params) => cancel({ ...params, onlyFrom: undefined });
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  it('refuses the cancel and rolls its write back', async () => {
    const { id } = await store.jobEnqueue({ job: { name: 'waiting', payload: {} } });
    const refused = store.jobCancel({ jobId: id, onlyFrom: ['dead_lettered', 'quarantined'] });
    await expect(refused).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(store.jobCancel({ jobId: id, onlyFrom: ['dead_lettered'] })).rejects.toThrow(`Job ${id} is scheduled, not dead_lettered, so it was left as it is.`);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled' });
    expect((await store.auditList()).filter((entry) => entry.action === 'job.cancel')).toEqual([]);
    expect((await store.jobCancel({ jobId: id, onlyFrom: ['scheduled'] })).outcome).toBe('cancelled');
  });
});
