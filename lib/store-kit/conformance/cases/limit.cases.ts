import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS, mustGet } from './helpers.js';

const claim = (store: JobStore, workerId = 'w', queues = ['default']) => store.jobClaim({ workerId, limit: 50, queues, leaseMs: LEASE_MS });

export function limitCases(ctx: SuiteContext): void {
  it('caps the running jobs of one concurrency key, and a finished job frees its slot', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'tenant-a' }, max: 2, actor: 'ops' });
    for (let i = 0; i < 5; i++) await enqueue(h.store, { concurrencyKey: 'tenant-a', payload: i });
    const free = await enqueue(h.store, { concurrencyKey: 'tenant-b' });
    const unkeyed = await enqueue(h.store);
    const first = await claim(h.store);
    expect(first.filter((j) => j.concurrencyKey === 'tenant-a')).toHaveLength(2);
    expect(first.map((j) => j.id)).toEqual(expect.arrayContaining([free, unkeyed]));
    expect(await claim(h.store, 'w2')).toEqual([]);
    const done = first.find((j) => j.concurrencyKey === 'tenant-a')!;
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: done.id, attempt: 1, kind: 'succeeded' }] });
    const next = await claim(h.store, 'w2');
    expect(next).toHaveLength(1);
    expect(next[0]!.concurrencyKey).toBe('tenant-a');
    expect(await h.store.concurrencyLimitList()).toEqual([{ key: 'tenant-a', max: 2 }]);
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ actor: 'ops', action: 'limit.set', target: 'key:tenant-a', detail: { max: 2 } });
  });

  it('caps a queue, and applies a queue cap and a key cap together', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 3 });
    await h.store.concurrencyLimitSet({ target: { key: 'vip' }, max: 1 });
    for (let i = 0; i < 4; i++) await enqueue(h.store, { queue: 'mail', payload: i });
    for (let i = 0; i < 3; i++) await enqueue(h.store, { queue: 'mail', concurrencyKey: 'vip', payload: 10 + i });
    const claimed = await claim(h.store, 'w', ['mail']);
    expect(claimed).toHaveLength(3);
    expect(claimed.filter((j) => j.concurrencyKey === 'vip').length).toBeLessThanOrEqual(1);
    expect(await claim(h.store, 'w2', ['mail'])).toEqual([]);
  });

  it('frees the slot of a lapsed lease, so a crashed worker cannot leak it', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    const a = await enqueue(h.store, { concurrencyKey: 'k', maxAttempts: 1 });
    const b = await enqueue(h.store, { concurrencyKey: 'k' });
    expect((await claim(h.store, 'crashed')).map((j) => j.id)).toEqual([a]);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await h.advance(LEASE_MS);
    // The lapsed job has no attempts left, so the slot goes to the next job with this key.
    expect((await claim(h.store, 'w2')).map((j) => j.id)).toEqual([b]);
    await h.store.jobExpireLeases({ limit: 10 });
    expect((await mustGet(h.store, a)).state).toBe('dead_lettered');
  });

  it('keeps the slot of a job whose heartbeats renew its lease past the first one', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    const a = await enqueue(h.store, { concurrencyKey: 'k' });
    await enqueue(h.store, { concurrencyKey: 'k' });
    const [held] = await claim(h.store, 'w1');
    expect(held!.id).toBe(a);
    await h.advance(LEASE_MS / 2);
    const beat = await h.store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: a, attempt: 1 }], leaseMs: LEASE_MS });
    expect(beat.renewed).toHaveLength(1);
    await h.advance(LEASE_MS / 2 + 1);
    expect(await claim(h.store, 'w2')).toEqual([]);
  });

  it('declares a key\'s limit at enqueue when it has none; the first declaration stands', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { concurrencyKey: 'acct-1', concurrencyLimit: 1 });
    await enqueue(h.store, { concurrencyKey: 'acct-1', concurrencyLimit: 5 });
    await enqueue(h.store, { concurrencyKey: 'acct-1' });
    expect(await h.store.concurrencyLimitList()).toEqual([{ key: 'acct-1', max: 1 }]);
    expect(await claim(h.store)).toHaveLength(1);
    // Audited once, as verify reads a limit's history from the log; the declarations that changed nothing leave none.
    const declared = await h.store.auditList({ action: 'limit.declare' });
    expect(declared.map(({ actor, target, detail }) => ({ actor, target, detail }))).toEqual([{ actor: 'enqueue', target: 'key:acct-1', detail: { max: 1 } }]);
  });

  it('issue 40: a declaration audited in a batch, once per key, and a rate declared beside it audited as its own', async () => {
    const h = await ctx.open();
    await h.store.jobEnqueueMany({
      jobs: [
        { name: 'a', payload: 1, concurrencyKey: 'acct-2', concurrencyLimit: 2, rateLimit: { max: 3, perMs: 1_000 } },
        { name: 'a', payload: 2, concurrencyKey: 'acct-2', concurrencyLimit: 2 },
        { name: 'a', payload: 3, concurrencyKey: 'acct-3', concurrencyLimit: 4 },
      ],
    });
    const log = (await h.store.auditList()).map(({ action, target, detail }) => ({ action, target, detail }));
    expect(log).toEqual(
      expect.arrayContaining([
        { action: 'limit.declare', target: 'key:acct-2', detail: { max: 2 } },
        { action: 'limit.declare', target: 'key:acct-3', detail: { max: 4 } },
        { action: 'rate_limit.declare', target: 'key:acct-2', detail: { rate: { max: 3, perMs: 1_000 } } },
      ]),
    );
    expect(log).toHaveLength(3);
  });

  it('raises, lowers and removes a limit at run time', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    for (let i = 0; i < 4; i++) await enqueue(h.store, { concurrencyKey: 'k', payload: i });
    expect(await claim(h.store, 'w1')).toHaveLength(1);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    expect(await claim(h.store, 'w3')).toEqual([]);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: null });
    expect(await h.store.concurrencyLimitList()).toEqual([]);
    expect(await claim(h.store, 'w4')).toHaveLength(2);
  });

  it('after a limit is lowered below its running jobs, neither a job that finishes nor raising it again lets more start than it allows', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    for (let i = 0; i < 6; i++) await enqueue(h.store, { concurrencyKey: 'k', payload: i });
    const running = await claim(h.store, 'w1');
    expect(running).toHaveLength(3);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    const last = running[2]!;
    await h.store.jobCompleteMany({ workerId: 'w1', outcomes: [{ jobId: last.id, attempt: last.attempt, kind: 'succeeded' }] });
    // Two still run against a limit of 1.
    expect(await claim(h.store, 'w2')).toEqual([]);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await claim(h.store, 'w3')).toEqual([]);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    expect(await claim(h.store, 'w4')).toHaveLength(1);
    expect(await claim(h.store, 'w5')).toEqual([]);
  });

  it('does not let a saturated key starve jobs behind it', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'busy' }, max: 1 });
    for (let i = 0; i < 120; i++) await enqueue(h.store, { concurrencyKey: 'busy', payload: i });
    const late = await enqueue(h.store, { concurrencyKey: 'quiet' });
    await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    const next = await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect(next.map((j) => j.id)).toEqual([late]);
  });

  it.each<[string, (s: JobStore) => Promise<unknown>, RegExp]>([
    ['a limit of 0', (s) => s.concurrencyLimitSet({ target: { key: 'k' }, max: 0 }), /^max must be a whole number from 1 to 10000, got 0\.$/],
    ['a limit without a target', (s) => s.concurrencyLimitSet({ target: {} as never, max: 2 }), /^A concurrency limit needs a target/],
    ['a hostile queue name', (s) => s.concurrencyLimitSet({ target: { queue: "x'; drop" }, max: 2 }), /queue must be 1 to 64 characters/],
    ['a concurrencyLimit without a key', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, concurrencyLimit: 2 } }), /^concurrencyLimit needs a concurrencyKey or a group\.$/],
    ['a concurrency key with a newline', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, concurrencyKey: 'a\nb' } }), /^concurrencyKey must be 1 to 200 characters/],
    ['a concurrencyLimit of NaN', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, concurrencyKey: 'k', concurrencyLimit: Number.NaN } }), /^concurrencyLimit must be a whole number/],
  ])('refuses %s before writing anything', async (_label, call, pattern) => {
    const h = await ctx.open();
    const before = await h.snapshot();
    const error = await call(h.store).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(pattern);
    expect(await h.snapshot()).toEqual(before);
  });
}
