import { beforeEach, expect, it } from '@jest/globals';
import type { StoreUnderTest } from '../../lib/store-kit/conformance/index.js';
import type { DashboardBrowser } from './dashboard-browser.js';
import { deadLetter, endJobs, enqueueBatch, linkedJobIds } from './dashboard-fixtures.js';

/** The value of a link's href with that label, decoded as a browser follows it. */
export const link = (text: string, label: string) => [...text.matchAll(/href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].find((m) => m[2] === label)?.[1]?.replace(/&amp;/g, '&');

/**
 * Issue 35 item 9: every page is bounded in rows and bytes whatever the store holds, with a link to
 * the rest. Run by runDashboardCases on each store, with its store and browser.
 */
export function boundedPageCases(current: () => { readonly h: StoreUnderTest; readonly browser: DashboardBrowser }): void {
  let h: StoreUnderTest;
  let browser: DashboardBrowser;
  beforeEach(() => {
    ({ h, browser } = current());
  });

  const queueNames = (text: string) => [...text.matchAll(/<th scope="row"><a href="\/queues\/([^"]+)">/g)].map((m) => m[1]!);

  it('issue 35 item 9: the overview shows the queues 100 at a time, with the totals of all, and pages to the rest', async () => {
    const queues = Array.from({ length: 230 }, (_, i) => `q-${String(i).padStart(4, '0')}`);
    await h.store.jobEnqueueMany({ jobs: queues.map((queue) => ({ name: 'work', payload: {}, queue })) });
    const first = await browser.get('/');
    expect(first.status).toBe(200);
    expect(queueNames(first.text)).toEqual(queues.slice(0, 100));
    expect(first.text).toMatch(/<span class="value">230<\/span><span class="label">Scheduled<\/span>/);
    expect(first.text).toContain('Queues q-0000 to q-0099 of 230, by name, 100 at a time.');
    expect(first.text.length).toBeLessThan(120_000);
    const seen: string[] = [];
    let page = first;
    for (let i = 0; i < 5 && page; i++) {
      seen.push(...queueNames(page.text));
      const next = link(page.text, 'Next 100 queues');
      if (!next) break;
      page = await browser.get(next);
    }
    expect(seen).toEqual(queues);
    expect(page.text).toContain('href="/">First queues</a>');
    // One queue by name, from the overview's form.
    const one = await browser.get('/queues?name=q-0150');
    expect(one.status).toBe(200);
    expect(one.text).toContain('<h1>Queue q-0150</h1>');
    expect((await browser.get('/queues?name=no%20such')).status).toBe(400);
  });

  it('issue 35 item 9: a job with many long failed attempts shows its newest 50 transitions, each long error cut, and links to the rest', async () => {
    const stack = (attempt: number) => `card declined on attempt ${attempt}\n${Array.from({ length: 100 }, (_, i) => `    at frame${i} (/srv/app/handlers/charge.ts:${i}:7)`).join('\n')}`.slice(0, 8_000);
    const { id } = await h.store.jobEnqueue({ job: { name: 'charge', payload: { note: 'x'.repeat(60_000) }, queue: 'failing', maxAttempts: 60 } });
    for (let attempt = 1; attempt <= 60; attempt++) {
      expect(await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['failing'], leaseMs: 30_000 })).toHaveLength(1);
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: stack(attempt), retryDelayMs: 0 }] });
    }
    const full = await h.store.jobHistory({ jobId: id });
    expect(full).toHaveLength(121);
    const page = await browser.get(`/jobs/${id}`);
    expect(page.status).toBe(200);
    expect(page.text.length).toBeLessThan(150_000);
    const timeline = (text: string) => /<table class="timeline">([\s\S]*?)<\/table>/.exec(text)![1]!;
    const rows = (text: string) => [...timeline(text).matchAll(/<tr><td><time/g)].length;
    expect(rows(page.text)).toBe(50);
    // The first line shows; the stack is behind a details element, cut, with a link to the whole error.
    expect(timeline(page.text)).toContain('<details><summary>card declined on attempt 60</summary>');
    const wholes = [...timeline(page.text).matchAll(/href="([^"]+)">Show the whole error<\/a>/g)].map((m) => m[1]!);
    expect(wholes).toHaveLength(25);
    const whole = wholes.at(-1)!;
    expect(whole).toBe(`/jobs/${id}/history/${full.at(-1)!.id}`);
    const wholeError = await browser.get(whole);
    expect(wholeError.text).toContain(stack(60).split('\n').at(-1));
    // Earlier entries, page by page, reach every transition once.
    let count = rows(page.text);
    let earlier = link(page.text, 'Earlier entries');
    while (earlier) {
      const older = await browser.get(earlier);
      count += rows(older.text);
      expect(older.text).toContain(`href="/jobs/${id}">Newest entries</a>`);
      earlier = link(older.text, 'Earlier entries');
    }
    expect(count).toBe(121);
    // A revealed payload shows its start, and the whole of it a link away.
    const revealed = await browser.get(`/jobs/${id}?reveal=payload`);
    expect(revealed.text.length).toBeLessThan(170_000);
    expect(revealed.text).toContain('The first 16,384 characters of 60,');
    expect(link(revealed.text, 'Show the whole text')).toBe(`/jobs/${id}/payload`);
    expect((await browser.get(`/jobs/${id}/payload`)).text).toContain('x'.repeat(60_000));
    // The live refresh does not read the payload again.
    const refresh = await fetch(`${browser.base}/jobs/${id}?reveal=payload`, { headers: { 'x-dashboard-refresh': '1' } });
    expect(await refresh.text()).not.toContain('x'.repeat(1_000));
    expect((await browser.get(`/jobs/${id}/history/1x`)).status).toBe(400);
    expect((await browser.get(`/jobs/${id}/history/${full.at(-1)!.id + 1_000_000}`)).status).toBe(404);
  });

  it('issue 35 item 9: the dead-letter page shows 50 groups of at most 10 jobs, with links to each whole group and to the older ones', async () => {
    for (let i = 0; i < 12; i++) await deadLetter(h.store, 'charge', 'card declined');
    for (let i = 0; i < 55; i++) await deadLetter(h.store, `job-${String(i).padStart(2, '0')}`, 'timeout');
    const page = await browser.get('/dead-letters');
    expect([...page.text.matchAll(/<tr class="group-head">/g)]).toHaveLength(50);
    const group = /<tr class="group-head"><th colspan="9">12 × <code>charge<\/code>[\s\S]*?<\/tbody>/.exec(page.text)![0];
    expect(linkedJobIds(group)).toHaveLength(10);
    const whole = link(group, 'Show all 12 of this group');
    expect(whole).toBe('/dead-letters?name=charge&error=card+declined');
    expect(linkedJobIds((await browser.get(whole!)).text)).toHaveLength(12);
    const next = link(page.text, 'Smaller groups');
    expect([...(await browser.get(next!)).text.matchAll(/<tr class="group-head">/g)]).toHaveLength(6);
  });

  it('the sequences page shows 100 blocked sequences at a time in key order, and pages to the rest by key', async () => {
    // Keys that a trimmed parameter would change: the page after one must start after it exactly.
    const keys = Array.from({ length: 105 }, (_, i) => `acct ${String(i).padStart(3, '0')}${i === 99 ? ' ' : ''}`);
    await h.store.jobEnqueueMany({
      jobs: keys.flatMap((key) => [
        { name: 'acct.open', payload: {}, queue: 'sequence-heads', maxAttempts: 1, sequence: { key } },
        { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key } },
      ]),
    });
    const heads = await h.store.jobClaim({ workerId: 'w', limit: 200, queues: ['sequence-heads', 'ledger'], leaseMs: 30_000 });
    expect(heads).toHaveLength(105);
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: heads.map((job) => ({ jobId: job.id, attempt: 1, kind: 'dead_lettered' as const, error: 'ledger refused' })) });
    const shown = (text: string) => [...text.matchAll(/<td><code>([^<]+)<\/code><\/td>/g)].map((m) => m[1]!);
    const first = await browser.get('/sequences');
    expect(shown(first.text)).toEqual(keys.slice(0, 100));
    expect(first.text.length).toBeLessThan(150_000);
    const next = link(first.text, 'Next 100 sequences')!;
    expect(next).toBe('/sequences?after=acct+099+');
    const second = await browser.get(next);
    expect(shown(second.text)).toEqual(keys.slice(100));
    expect(second.text).not.toContain('Next 100 sequences');
    expect(link(second.text, 'First sequences')).toBe('/sequences');
  });

  it('the groups page shows 100 groups at a time by name, counts a backlog up to 1,000, and pages to the rest by group', async () => {
    // Groups that a trimmed parameter would change: the page after one must start after it exactly.
    const groups = Array.from({ length: 103 }, (_, i) => `tenant ${String(i).padStart(3, '0')}${i === 99 ? ' ' : ''}`);
    await h.store.jobEnqueueMany({ jobs: groups.map((group) => ({ name: 'export.build', payload: {}, group })) });
    for (let at = 0; at < 1_001; at += 500) {
      await h.store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(500, 1_001 - at) }, () => ({ name: 'export.build', payload: {}, group: groups[0]! })) });
    }
    const shown = (text: string) => [...text.matchAll(/<td><code>([^<]+)<\/code><\/td>/g)].map((m) => m[1]!);
    const first = await browser.get('/groups');
    expect(shown(first.text)).toEqual(groups.slice(0, 100));
    expect(first.text).toMatch(/<td><code>tenant 000<\/code><\/td>\s*<td class="num">1,000\+<\/td>/);
    expect(first.text.length).toBeLessThan(150_000);
    const next = link(first.text, 'Next 100 groups')!;
    expect(next).toBe('/groups?after=tenant+099+');
    const second = await browser.get(next);
    expect(shown(second.text)).toEqual(groups.slice(100));
    expect(second.text).not.toContain('Next 100 groups');
    expect(link(second.text, 'First groups')).toBe('/groups');
  });

  it('the batches page shows 50 batches at a time, newest first, and pages to older ones by before', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push((await enqueueBatch(h.store, 1, ['complete'])).batchId);
    const newest = [...ids].reverse();
    const shown = (text: string) => [...text.matchAll(/<td><a class="id" href="\/batches\/([0-9a-f-]{36})">/g)].map((m) => m[1]!);
    const first = await browser.get('/batches');
    expect(shown(first.text)).toEqual(newest.slice(0, 50));
    expect(first.text.length).toBeLessThan(150_000);
    expect(first.text).not.toContain('Newest batches');
    const older = link(first.text, 'Older batches')!;
    expect(older).toBe(`/batches?before=${newest[49]}`);
    const second = await browser.get(older);
    expect(shown(second.text)).toEqual(newest.slice(50));
    expect(second.text).not.toContain('Older batches');
    expect(link(second.text, 'Newest batches')).toBe('/batches');
    expect((await browser.get(`/batches?before=${ids[0]}`)).text).toContain('No batch is older than this one.');
  });

  it("a batch's page lists its first 200 failed jobs by id, and up to 1,000 when asked", async () => {
    const batch = await enqueueBatch(h.store, 205, ['complete']);
    await endJobs(h.store, 'batch', batch.jobs.map((job) => [job.id, 'dead_lettered'] as const));
    const all = batch.jobs.map((job) => job.id).sort();
    const failed = (text: string) => linkedJobIds(/<ul class="failed">([\s\S]*?)<\/ul>/.exec(text)![1]!);
    const page = await browser.get(`/batches/${batch.batchId}`);
    expect(failed(page.text)).toEqual(all.slice(0, 200));
    expect(page.text).toContain('These are the first 200 of 205 failed jobs, by id.');
    expect(link(page.text, 'Show up to 1,000')).toBe(`/batches/${batch.batchId}?more=1`);
    const more = await browser.get(`/batches/${batch.batchId}?more=1`);
    expect(failed(more.text)).toEqual(all);
    expect(more.text).not.toContain('These are the first');
  });

  it('issue 35 item 9: the limits page shows 100 concurrency and 100 rate limits at a time, each table paging on its own', async () => {
    for (let i = 0; i < 105; i++) await h.store.concurrencyLimitSet({ target: { key: `tenant-${String(i).padStart(3, '0')}` }, max: 2 });
    for (let i = 0; i < 102; i++) await h.store.rateLimitSet({ target: { key: `tenant-${String(i).padStart(3, '0')}` }, rate: { max: 5, perMs: 60_000 } });
    const targets = (text: string, table: string) => [...(new RegExp(`<table id="${table}"[\\s\\S]*?</table>`).exec(text)?.[0] ?? '').matchAll(/<td>key<\/td><td>(tenant-\d+)<\/td>/g)].map((m) => m[1]);
    const first = await browser.get('/limits');
    expect(targets(first.text, 'limits')).toHaveLength(100);
    expect(targets(first.text, 'rate-limits')).toHaveLength(100);
    const nextLimits = await browser.get(link(first.text, 'Next concurrency limits')!);
    expect(targets(nextLimits.text, 'limits')).toEqual(['tenant-100', 'tenant-101', 'tenant-102', 'tenant-103', 'tenant-104']);
    expect(targets(nextLimits.text, 'rate-limits')).toHaveLength(100);
    const bothNext = await browser.get(link(nextLimits.text, 'Next rate limits')!);
    expect(targets(bothNext.text, 'limits')).toHaveLength(5);
    expect(targets(bothNext.text, 'rate-limits')).toEqual(['tenant-100', 'tenant-101']);
  });

  it('issue 35 item 9: the audit and workers pages say when they stopped at 200 rows, and show up to 1,000 when asked', async () => {
    for (let i = 0; i < 205; i++) await h.store.queuePause({ queue: `q${i}`, actor: 'ops' });
    const audit = await browser.get('/audit');
    expect([...audit.text.matchAll(/<td>ops<\/td>/g)]).toHaveLength(200);
    expect(link(audit.text, 'Show up to 1,000')).toBe('/audit?more=1');
    const more = await browser.get('/audit?more=1');
    expect([...more.text.matchAll(/<td>ops<\/td>/g)]).toHaveLength(205);
    expect(more.text).not.toContain('Show up to 1,000');
    expect((await browser.get('/workers')).text).not.toContain('Show up to 1,000');
  });
}
