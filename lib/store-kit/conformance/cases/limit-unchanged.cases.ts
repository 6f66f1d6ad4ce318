import { expect, it } from '@jest/globals';
import type { JobStore } from '../../../store/index.js';
import type { StoreUnderTest, SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS } from './helpers.js';

const auditCount = async (store: JobStore) => (await store.auditList({ limit: 1_000 })).length;

/** Expects `write` to change no row of the store's tables and to add no audit entry. */
async function expectNoWrite(h: StoreUnderTest, write: () => Promise<unknown>): Promise<void> {
  // Past the instant of the last write, so a rewrite of the same values would still show (updated_at).
  await h.advance(1_000);
  const before = await h.snapshot();
  const audited = await auditCount(h.store);
  await write();
  expect(await h.snapshot()).toEqual(before);
  expect(await auditCount(h.store)).toBe(audited);
}

/**
 * A limit set to what it already is, or removed where there is none, is no change: the store writes
 * nothing and audits nothing, whoever calls (every node's boot sets the module's limits).
 */
export function limitUnchangedCases(ctx: SuiteContext): void {
  it('issue 35 item 4: a rate limit set to the rate it has writes and audits nothing; a change or a removal does', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 2, perMs: 60_000 }, actor: 'boot' });
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 3, perMs: 1_000 }, actor: 'boot' });
    // A start in use, so the starts are not all alike: a rewrite that reordered them would show too.
    await enqueue(h.store, { concurrencyKey: 'k' });
    expect(await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS })).toHaveLength(1);
    await expectNoWrite(h, () => h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 2, perMs: 60_000 }, actor: 'boot' }));
    await expectNoWrite(h, () => h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 3, perMs: 1_000 }, actor: 'ops' }));
    await expectNoWrite(h, () => h.store.rateLimitSet({ target: { key: 'none' }, rate: null, actor: 'ops' }));
    // Either half of the rate differing is a change.
    await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 2, perMs: 30_000 }, actor: 'ops' });
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 4, perMs: 1_000 }, actor: 'ops' });
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: null, actor: 'ops' });
    await expectNoWrite(h, () => h.store.rateLimitSet({ target: { key: 'k' }, rate: null, actor: 'ops' }));
    const entries = (await h.store.auditList({ limit: 100 })).reverse();
    expect(entries.map((entry) => [entry.actor, entry.target, entry.detail])).toEqual([
      ['boot', 'queue:mail', { rate: { max: 2, perMs: 60_000 } }],
      ['boot', 'key:k', { rate: { max: 3, perMs: 1_000 } }],
      ['ops', 'queue:mail', { rate: { max: 2, perMs: 30_000 } }],
      ['ops', 'key:k', { rate: { max: 4, perMs: 1_000 } }],
      ['ops', 'key:k', { rate: null }],
    ]);
    expect(await h.store.rateLimitList()).toEqual([{ queue: 'mail', max: 2, perMs: 30_000 }]);
  });

  it('issue 35 item 4: a concurrency limit set to the max it has writes and audits nothing; a change or a removal does', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 2, actor: 'boot' });
    // Jobs running under it, so a rewrite that moved slots would show.
    for (let i = 0; i < 2; i++) await enqueue(h.store, { queue: 'mail', payload: i });
    expect(await h.store.jobClaim({ workerId: 'w', limit: 5, queues: ['mail'], leaseMs: LEASE_MS })).toHaveLength(2);
    await expectNoWrite(h, () => h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 2, actor: 'boot' }));
    await expectNoWrite(h, () => h.store.concurrencyLimitSet({ target: { key: 'none' }, max: null, actor: 'ops' }));
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 3, actor: 'ops' });
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: null, actor: 'ops' });
    await expectNoWrite(h, () => h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: null, actor: 'ops' }));
    const entries = (await h.store.auditList({ limit: 100 })).reverse();
    expect(entries.map((entry) => [entry.actor, entry.target, entry.detail])).toEqual([
      ['boot', 'queue:mail', { max: 2 }],
      ['ops', 'queue:mail', { max: 3 }],
      ['ops', 'queue:mail', { max: null }],
    ]);
  });

  it('issue 35 item 4: a limit declared at enqueue and then set to the same max or rate by an operator is not rewritten or audited', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { concurrencyKey: 'tenant', concurrencyLimit: 2, rateLimit: { max: 5, perMs: 1_000 } });
    await expectNoWrite(h, () => h.store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 2, actor: 'boot' }));
    await expectNoWrite(h, () => h.store.rateLimitSet({ target: { key: 'tenant' }, rate: { max: 5, perMs: 1_000 }, actor: 'boot' }));
    // The declared cap still holds: two of three start.
    for (let i = 0; i < 2; i++) await enqueue(h.store, { concurrencyKey: 'tenant', payload: i });
    expect(await h.store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: LEASE_MS })).toHaveLength(2);
    // The declarations alone are audited; the sets that changed nothing add no entry.
    expect((await h.store.auditList({ limit: 10 })).map((e) => e.action).sort()).toEqual(['limit.declare', 'rate_limit.declare']);
  });
}
