import { beforeEach, expect, it } from '@jest/globals';
import type { StoreUnderTest } from '../../lib/store-kit/conformance/index.js';
import { link } from './bounded-pages.cases.js';
import type { DashboardBrowser } from './dashboard-browser.js';
import { deadLetter, linkedJobIds } from './dashboard-fixtures.js';

/** Issue 35 item 22: the dashboard's polish, on each store. Its 390 px layout is checked in Chromium (test-e2e/dashboard-phone.e2e.ts). */
export function polishCases(current: () => { readonly h: StoreUnderTest; readonly browser: DashboardBrowser }): void {
  let h: StoreUnderTest;
  let browser: DashboardBrowser;
  beforeEach(() => {
    ({ h, browser } = current());
  });

  it('issue 35 item 22: the timeline shows an error’s first line, and the stack behind it only when opened', async () => {
    const { id } = await h.store.jobEnqueue({ job: { name: 'charge', payload: {}, queue: 'failing', maxAttempts: 2 } });
    const errors = ['card declined\n    at charge (/srv/app/charge.ts:12:7)\n    at run (/srv/app/worker.ts:40:3)', 'timeout'];
    for (const [i, error] of errors.entries()) {
      await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['failing'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: i + 1, kind: 'failed', error, retryDelayMs: 0 }] });
    }
    const timeline = /<table class="timeline">([\s\S]*?)<\/table>/.exec((await browser.get(`/jobs/${id}`)).text)![1]!;
    expect(timeline).toContain('<td class="error"><details><summary>card declined</summary><pre class="error">card declined\n    at charge (/srv/app/charge.ts:12:7)\n    at run (/srv/app/worker.ts:40:3)</pre></details></td>');
    // A one-line error needs no opening.
    expect(timeline).toContain('<td class="error">timeout</td>');
    expect([...timeline.matchAll(/<details>/g)]).toHaveLength(1);
  });

  it('issue 35 item 22: dead letters whose errors differ only in numbers, UUIDs or hex ids group together, with a real example shown', async () => {
    const errors = [
      'order 4711 not found for customer 0190a5a0-0000-7000-8000-000000000001 (ref 5f2b8c9e1a3d4e6f7a8b9c0d)\n  at ship.ts:1',
      'order 4712 not found for customer 0190a5a0-0000-7000-8000-00000000beef (ref 0x1f2e3d)',
      'order 90210 not found for customer 0190A5A0-0000-7000-8000-0000000000FF (ref 64b8f0c2e4a1d3b5c7e9f1a2)',
    ];
    const ids = [];
    for (const error of errors) ids.push(await deadLetter(h.store, 'ship', error));
    const other = await deadLetter(h.store, 'ship', 'carrier refused the parcel');
    const page = await browser.get('/dead-letters');
    const pattern = 'order &lt;n&gt; not found for customer &lt;uuid&gt; (ref &lt;hex&gt;)';
    expect(page.text).toContain(`3 × <code>ship</code>: <span class="error">order 90210 not found for customer 0190A5A0-0000-7000-8000-0000000000FF (ref 64b8f0c2e4a1d3b5c7e9f1a2)</span> <small>and others like it: <code>${pattern}</code></small>`);
    expect(page.text).toContain('1 × <code>ship</code>: <span class="error">carrier refused the parcel</span>');
    // The group's link names the pattern, and its question reads the group again: all three, not the other one.
    const replay = link(page.text, 'Replay these 3')!;
    expect(replay).toBe('/dead-letters/replay?name=ship&error=order+%3Cn%3E+not+found+for+customer+%3Cuuid%3E+%28ref+%3Chex%3E%29');
    const question = await browser.get(replay);
    expect(question.text).toContain('Replay 3 dead letters?');
    expect(linkedJobIds(question.text)).toEqual([]);
    for (const id of ids) expect(question.text).toContain(`<input type="hidden" name="id" value="${id}">`);
    expect(question.text).not.toContain(other);
  });

  it('issue 35 item 22: replay, run now, pause, resume and trigger confirm with a primary button; a cancel stays destructive', async () => {
    const dead = await deadLetter(h.store, 'charge', 'declined');
    const { id: later } = await h.store.jobEnqueue({ job: { name: 'report', payload: {}, queue: 'reports', delayMs: 3_600_000 } });
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'report', everyMs: 3_600_000 } });
    const button = async (path: string) => /<button type="submit" class="(\w+)">/.exec((await browser.get(path)).text)?.[1];
    expect(await button(`/jobs/${dead}/replay`)).toBe('primary');
    expect(await button(`/jobs/${later}/run-now`)).toBe('primary');
    expect(await button('/queues/reports/pause')).toBe('primary');
    expect(await button(`/schedules/${schedule.id}/trigger`)).toBe('primary');
    expect(await button('/dead-letters/replay?name=charge&error=declined')).toBe('primary');
    expect(await button(`/jobs/${dead}/cancel`)).toBe('danger');
    expect(await button(`/jobs/${later}/cancel`)).toBe('danger');
    expect(await button('/dead-letters/cancel?name=charge&error=declined')).toBe('danger');
    expect(await button(`/jobs/cancel?id=${later}`)).toBe('danger');
  });

  it('issue 35 item 22: the throughput chart has a legend of its colours and a scale with round numbers', async () => {
    for (let i = 0; i < 7; i++) {
      const { id } = await h.store.jobEnqueue({ job: { name: 'work', payload: {}, queue: 'mail' } });
      await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['mail'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] });
    }
    await deadLetter(h.store, 'charge', 'declined');
    const chart = /<figure class="chart">([\s\S]*?)<\/figure>/.exec((await browser.get('/')).text)![1]!;
    expect(chart).toContain('<ul class="legend"><li><span class="swatch swatch-succeeded"></span>succeeded</li><li><span class="swatch swatch-dead_lettered"></span>dead-lettered</li><li><span class="swatch swatch-cancelled"></span>cancelled</li></ul>');
    // Eight this minute: the scale runs to 10, with lines at 0, 5 and 10 and their numbers.
    expect([...chart.matchAll(/class="tick end">([^<]+)<\/text>/g)].map((m) => m[1])).toEqual(['0', '5', '10']);
    expect(chart).toContain('>jobs/min</text>');
    expect([...chart.matchAll(/class="tick mid">([^<]+)<\/text>/g)].map((m) => m[1])).toEqual(['now', '15 min ago', '30 min ago', '45 min ago']);
    expect(chart).toContain('on a scale up to 10 a minute');
  });

  it('issue 35 item 22: a schedule in Europe/Berlin shows its fire times in its own zone too, with the zone named', async () => {
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'report', cron: '0 9 * * 1', timezone: 'Europe/Berlin', queue: 'reports' } });
    const { schedule: utc } = await h.store.scheduleUpsert({ schedule: { name: 'digest', cron: '0 9 * * 1', queue: 'reports' } });
    const times = /<ol class="fire-times">([\s\S]*?)<\/ol>/.exec((await browser.get(`/schedules/${schedule.id}`)).text)![1]!;
    const zoned = [...times.matchAll(/<li><time datetime="([^"]+)">([^<]+)<\/time> <small>[^<]*<\/small> <span class="zone">([^<]+)<\/span><\/li>/g)];
    expect(zoned).toHaveLength(5);
    for (const [, iso, utcText, local] of zoned) {
      // 09:00 in Berlin is 08:00 UTC in winter and 07:00 in summer.
      expect(local).toMatch(/^\d{4}-\d{2}-\d{2} 09:00:00 Europe\/Berlin \(GMT\+[12]\)$/);
      expect(utcText).toBe(`${iso!.slice(0, 10)} ${local!.endsWith('(GMT+1)') ? '08' : '07'}:00:00`);
    }
    expect((await browser.get('/schedules')).text).toContain('09:00:00 Europe/Berlin (GMT+');
    expect((await browser.get(`/schedules/${utc.id}`)).text).not.toContain('class="zone"');
  });
}
