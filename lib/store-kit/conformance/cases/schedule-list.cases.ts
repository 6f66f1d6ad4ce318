import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { expectRefused } from './helpers.js';

export function scheduleListCases(ctx: SuiteContext): void {
  it('lists schedules oldest first a page at a time, each page after the last id of the one before', async () => {
    const h = await ctx.open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await h.store.scheduleUpsert({ schedule: { name: `list.${i}`, everyMs: 60_000 } })).schedule.id);
      await h.advance(1);
    }
    const all = (await h.store.scheduleList({ limit: 1_000 })).map((s) => s.id);
    expect(all).toEqual(ids);
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await h.store.scheduleList({ limit: 2, after })).map((s) => s.id);
      if (page.length === 0) break;
      pages.push(page);
      after = page.at(-1);
    }
    expect(pages).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    // Fifty by default.
    for (let i = 5; i < 52; i++) await h.store.scheduleUpsert({ schedule: { name: `list.${i}`, everyMs: 60_000 } });
    expect(await h.store.scheduleList()).toHaveLength(50);
  });

  it('refuses a bad page size, a cursor that is not an id, and one that names no schedule, in one sentence', async () => {
    const h = await ctx.open();
    await h.store.scheduleUpsert({ schedule: { name: 'list.one', everyMs: 60_000 } });
    await expectRefused(() => h.store.scheduleList({ limit: 0 }), /^limit must be/);
    await expectRefused(() => h.store.scheduleList({ limit: 1_001 }), /^limit must be/);
    await expectRefused(() => h.store.scheduleList({ after: 'x' }), /^after must be a UUID/);
    const missing = '0190a5a0-0000-7000-8000-00000000beef';
    await expectRefused(() => h.store.scheduleList({ after: missing }), new RegExp(`^after names schedule ${missing}, which is not stored; start again from the first page\\.$`));
  });
}
