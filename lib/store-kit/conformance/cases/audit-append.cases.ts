import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';

/** Entries an operator or the module adds to the audit log (a verify run's report), and the log read by action. */
export function auditAppendCases(ctx: SuiteContext): void {
  it('issue 40: auditAppend files an entry on the store clock, with its actor and JSON detail; auditList reads one action newest first', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2, actor: 'ops' });
    await h.store.auditAppend({ action: 'verify.run', target: 'the whole history', detail: { violationCount: 0, notChecked: ['limits ☃'], nested: { at: '2030-01-01T00:00:00.000Z' } } });
    await h.store.auditAppend({ actor: 'cli:ann', action: 'verify.run', target: 'since 2030-01-01T00:00:00.000Z' });
    const runs = await h.store.auditList({ action: 'verify.run' });
    expect(runs.map(({ actor, action, target, detail }) => ({ actor, action, target, detail }))).toEqual([
      { actor: 'cli:ann', action: 'verify.run', target: 'since 2030-01-01T00:00:00.000Z', detail: null },
      { actor: 'api', action: 'verify.run', target: 'the whole history', detail: { violationCount: 0, notChecked: ['limits ☃'], nested: { at: '2030-01-01T00:00:00.000Z' } } },
    ]);
    expect(runs[0]!.at).toBeInstanceOf(Date);
    expect(runs[0]!.at.getTime()).toBeGreaterThanOrEqual(runs[1]!.at.getTime());
    expect(await h.store.auditList({ action: 'verify.run', limit: 1 })).toHaveLength(1);
    expect((await h.store.auditList()).map((e) => e.action)).toEqual(['verify.run', 'verify.run', 'limit.set']);
    expect(await h.store.auditList({ action: 'queue.pause' })).toEqual([]);
  });

  it('issue 40: auditList reads the log back a page at a time, by the entries\' ids', async () => {
    const h = await ctx.open();
    for (let i = 0; i < 5; i++) await h.store.auditAppend({ action: 'verify.run', target: `t${i}` });
    await h.store.auditAppend({ action: 'queue.note', target: 'other' });
    const all = await h.store.auditList({ action: 'verify.run' });
    expect(all.map((e) => e.target)).toEqual(['t4', 't3', 't2', 't1', 't0']);
    expect(all.every((e, i) => i === 0 || e.id < all[i - 1]!.id)).toBe(true);
    const pages: string[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await h.store.auditList({ action: 'verify.run', limit: 2, ...(before === undefined ? {} : { before }) });
      if (page.length === 0) break;
      pages.push(page.map((e) => e.target));
      before = page.at(-1)!.id;
    }
    expect(pages).toEqual([['t4', 't3'], ['t2', 't1'], ['t0']]);
    expect((await h.store.auditList({ before: all[0]!.id, limit: 1 }))[0]!.target).toBe('t3');
    await expect(h.store.auditList({ before: 0 })).rejects.toThrow(InvalidArgumentError);
  });

  it('issue 40: a bad audit entry or action is refused in one sentence, and nothing is written', async () => {
    const h = await ctx.open();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const params of [
      { action: 'Verify.Run', target: 't' },
      { action: 'verify', target: 't' },
      { action: 'verify.run', target: '' },
      { action: 'verify.run', target: 'a\nb' },
      { action: 'verify.run', target: 't', detail: [1] },
      { action: 'verify.run', target: 't', detail: cycle },
      { action: 'verify.run', target: 't', detail: { big: 'x'.repeat(60_001) } },
      { action: 'verify.run', target: 't', detail: { nul: 'a\u0000b' } },
      { action: 'verify.run', target: 't', detail: { lone: '\ud800' } },
      { action: 'verify.run', target: 't', detail: new Date(0) },
      { action: 'verify.run', target: 't', detail: { toJSON: () => undefined } },
      { action: 'verify.run', target: 't', detail: { n: 1n } },
      { action: `verify.${'r'.repeat(32)}`, target: 't' },
      { action: 'verify.run', target: 't', actor: '' },
    ]) {
      const refused = await h.store.auditAppend(params as never).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^[^\n]+\.$/);
    }
    expect(await h.store.auditList()).toEqual([]);
    const refused = await h.store.auditList({ action: 'drop table' } as never).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
  });
}
