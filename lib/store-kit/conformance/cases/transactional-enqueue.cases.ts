import { expect, it } from '@jest/globals';
import { CapabilityNotSupportedError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne } from './helpers.js';

class Rollback extends Error {}

export function transactionalEnqueueCases(ctx: SuiteContext): void {
  it('commits the job with the caller transaction, exactly once, or refuses without the capability', async () => {
    const h = await ctx.open();
    if (!h.store.capabilities.transactionalEnqueue) {
      const fakeManager = {} as never;
      const before = await h.snapshot();
      await expect(h.store.jobEnqueue({ job: { name: 'tx', payload: 1 }, manager: fakeManager })).rejects.toBeInstanceOf(CapabilityNotSupportedError);
      expect(await h.snapshot()).toEqual(before);
      return;
    }
    const id = await h.hostTransaction!(async (manager) => {
      const result = await h.store.jobEnqueue({ job: { name: 'tx.commit', payload: { ok: true } }, manager });
      return result.id;
    });
    expect(await h.countJobs()).toBe(1);
    expect(await claimOne(h.store)).toMatchObject({ id, name: 'tx.commit' });
  });

  it('leaves no job behind when the caller transaction rolls back', async () => {
    const h = await ctx.open();
    if (!h.store.capabilities.transactionalEnqueue) {
      await expect(h.store.jobEnqueueMany({ jobs: [{ name: 'tx', payload: 1 }], manager: {} as never })).rejects.toThrow(/cannot join a TypeORM transaction/);
      expect(await h.countJobs()).toBe(0);
      return;
    }
    await expect(
      h.hostTransaction!(async (manager) => {
        await h.store.jobEnqueueMany({
          jobs: [
            { name: 'tx.rollback', payload: 1 },
            { name: 'tx.rollback', payload: 2 },
          ],
          manager,
        });
        throw new Rollback('business rule failed');
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect(await h.countJobs()).toBe(0);
    expect(await h.store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: 30_000 })).toEqual([]);
  });
}
