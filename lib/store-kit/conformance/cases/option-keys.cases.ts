import { expect, it } from '@jest/globals';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { PARAMS_SHAPES } from './bad-input.cases.js';
import { claimOne, enqueue, expectRefused } from './helpers.js';

type Call = (s: JobStore) => Promise<unknown>;

const BOTH = { queue: 'mail', key: 'tenant-1' };

/** Every limit method, given a target that names both a queue and a key, and what it must say. */
const BOTH_TARGETS: Array<[label: string, call: Call, pattern: RegExp]> = [
  ['concurrencyLimitSet', (s) => s.concurrencyLimitSet({ target: BOTH as never, max: 2 }), /^A concurrency limit names both a queue and a key; give one target: \{ queue \} or \{ key \}\.$/],
  ['concurrencyLimitSet removing', (s) => s.concurrencyLimitSet({ target: BOTH as never, max: null }), /^A concurrency limit names both a queue and a key/],
  ['rateLimitSet', (s) => s.rateLimitSet({ target: BOTH as never, rate: { max: 1, perMs: 1_000 } }), /^A rate limit names both a queue and a key; give one target: \{ queue \} or \{ key \}\.$/],
  ['rateLimitSet removing', (s) => s.rateLimitSet({ target: BOTH as never, rate: null }), /^A rate limit names both a queue and a key/],
  ['rateLimitStatus', (s) => s.rateLimitStatus({ target: BOTH as never }), /^A rate limit names both a queue and a key/],
  ['limitHolders', (s) => s.limitHolders({ target: BOTH as never }), /^A concurrency limit names both a queue and a key/],
  ['concurrencyLimitList after', (s) => s.concurrencyLimitList({ limit: 1, after: BOTH as never }), /^A concurrency limit names both a queue and a key/],
  ['rateLimitList after', (s) => s.rateLimitList({ limit: 1, after: BOTH as never }), /^A rate limit names both a queue and a key/],
];

/** Targets with a key that is neither `queue` nor `key` (a limit's own field put in the wrong place, a typo). */
const STRAY_TARGET_KEYS: Array<[label: string, call: Call, pattern: RegExp]> = [
  ['a max inside the target', (s) => s.concurrencyLimitSet({ target: { queue: 'mail', max: 2 } as never, max: 2 }), /^max is not a known limit target option; known options are queue, key\.$/],
  ['a misspelt queue', (s) => s.rateLimitSet({ target: { queu: 'mail' } as never, rate: { max: 1, perMs: 1_000 } }), /^queu is not a known limit target option \(did you mean queue\?\)/],
];

export function optionKeyCases(ctx: SuiteContext): void {
  /** A store with a job waiting, one running, a queue limit and a key's rate: what a refused call must leave as it is. */
  async function populated() {
    const h = await ctx.open();
    await enqueue(h.store, { concurrencyKey: 'tenant-1' });
    await claimOne(h.store, 'w');
    await enqueue(h.store, { queue: 'mail' });
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 3 });
    await h.store.rateLimitSet({ target: { key: 'tenant-1' }, rate: { max: 5, perMs: 60_000 } });
    return h;
  }

  it.each(PARAMS_SHAPES.map(([method]) => method))('issue 35 item 7: %s refuses an unknown key in its params before reading or writing anything', async (method) => {
    const h = await populated();
    const before = await h.snapshot();
    const call = (h.store as unknown as Record<string, (params: unknown) => Promise<unknown>>)[method]!.bind(h.store);
    await expectRefused(() => call({ timeout: 5 }), new RegExp(`^timeout is not a known ${method} option`));
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 35 item 7: a misspelt optional field is refused, naming the field it most likely meant', async () => {
    const h = await populated();
    const before = await h.snapshot();
    await expectRefused(() => h.store.jobCancel({ jobId: '0190a5a0-0000-7000-8000-000000000001', onlyfrom: ['scheduled'] } as never), /^onlyfrom is not a known jobCancel option \(did you mean onlyFrom\?\); known options are jobId, actor, onlyFrom\.$/);
    await expectRefused(() => h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 1, perMs: 1_000 }, actr: 'me' } as never), /^actr is not a known rateLimitSet option \(did you mean actor\?\)/);
    await expectRefused(() => h.store.jobList({ limt: 5 } as never), /^limt is not a known jobList option \(did you mean limit\?\)/);
    expect(await h.snapshot()).toEqual(before);
  });

  it.each(BOTH_TARGETS)('issue 35 item 8: %s refuses a target naming both a queue and a key, and changes nothing', async (_label, call, pattern) => {
    const h = await populated();
    const before = await h.snapshot();
    await expectRefused(() => call(h.store), pattern);
    expect(await h.snapshot()).toEqual(before);
    // The queue's limit and the key's rate are where they were: neither was set nor removed.
    expect(await h.store.concurrencyLimitList()).toEqual([{ queue: 'mail', max: 3 }]);
    expect(await h.store.rateLimitList()).toEqual([{ key: 'tenant-1', max: 5, perMs: 60_000 }]);
  });

  it.each(STRAY_TARGET_KEYS)('issue 35 item 8: refuses %s in a limit target, and changes nothing', async (_label, call, pattern) => {
    const h = await populated();
    const before = await h.snapshot();
    await expectRefused(() => call(h.store), pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  it('a listed limit passed back as the page cursor, its max included, is still a target', async () => {
    const h = await populated();
    await h.store.concurrencyLimitSet({ target: { queue: 'zz' }, max: 1 });
    const [first] = await h.store.concurrencyLimitList({ limit: 1 });
    expect(await h.store.concurrencyLimitList({ limit: 1, after: first! })).toEqual([{ queue: 'zz', max: 1 }]);
  });
}
