/**
 * The dashboard on a phone, in a real Chromium at 390 px wide: the standalone server on an
 * in-memory store that holds something of every kind, each page loaded in turn. Nothing may widen
 * the page past the screen (a wide table scrolls inside its own box), the navigation must stay
 * inside its dark bar, and no request of the page may fail (the icon included).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'playwright-core';
import { startDashboardServer, type DashboardServer } from '../lib/dashboard/index.js';
import { MemoryJobStore } from '../lib/store/index.js';
import { launchChromium, type Chromium } from './support/chromium.js';

const PHONE = { width: 390, height: 844 } as const;

describe('the dashboard at 390 px wide, in Chromium', () => {
  let server: DashboardServer;
  let chromium: Chromium;
  const paths: string[] = ['/', '/jobs', '/dead-letters', '/sequences', '/batches', '/groups', '/schedules', '/limits', '/workers', '/observers', '/audit', '/guarantees'];

  beforeAll(async () => {
    chromium = await launchChromium(PHONE);
    const store = new MemoryJobStore();
    const stack = `upstream refused the request with a rather long message that has no spaces: ${'x'.repeat(120)}\n${'    at handler (/srv/app/handlers/a-long-module-name.ts:120:17)\n'.repeat(10)}`;
    for (const queue of ['mail', 'reports', 'billing-with-a-long-queue-name.eu-central-1']) await store.jobEnqueue({ job: { name: 'work.with.a.long.name', payload: {}, queue } });
    const { id } = await store.jobEnqueue({ job: { name: 'charge.customer.card', payload: { card: '4242' }, queue: 'failing', maxAttempts: 2, concurrencyKey: 'tenant-with-a-long-key-0190a5a0-0000-7000-8000-000000000001' } });
    for (const attempt of [1, 2]) {
      await store.jobClaim({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', limit: 1, queues: ['failing'], leaseMs: 30_000 });
      await store.jobCompleteMany({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', outcomes: [{ jobId: id, attempt, kind: 'failed', error: stack, retryDelayMs: 0 }] });
    }
    // A blocked sequence, so the Sequences page has a row with a long key and a long error.
    const sequence = { key: 'account-with-a-long-key-0190a5a0-0000-7000-8000-000000000002' };
    const blocked = await store.jobEnqueue({ job: { name: 'ledger.post.with.a.long.name', payload: {}, queue: 'failing', maxAttempts: 1, sequence } });
    await store.jobEnqueue({ job: { name: 'ledger.post.with.a.long.name', payload: {}, queue: 'failing', sequence } });
    await store.jobClaim({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', limit: 1, queues: ['failing'], leaseMs: 30_000 });
    await store.jobCompleteMany({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', outcomes: [{ jobId: blocked.id, attempt: 1, kind: 'failed', error: stack, retryDelayMs: 0 }] });
    // Grouped jobs with a long group, so the Groups page has a full row.
    await store.jobEnqueueMany({ jobs: [0, 1].map((i) => ({ name: 'export.build.with.a.long.name', payload: { i }, queue: 'exports', group: 'tenant-with-a-long-group-0190a5a0-0000-7000-8000-000000000003', delayMs: i * 3_600_000 })) });
    // A batch with a failed job and all three callbacks, so the Batches page and a batch's page have a full row and list.
    const batch = await store.jobEnqueueBatch({
      jobs: [0, 1, 2].map((i) => ({ name: 'import.row.with.a.long.name', payload: { i }, queue: 'imports-with-a-long-queue-name', maxAttempts: 1 })),
      onSuccess: { name: 'import.succeeded', payload: {}, queue: 'reports' },
      onComplete: { name: 'import.completed', payload: {}, queue: 'reports' },
      onFailure: { name: 'import.failed', payload: {}, queue: 'reports' },
    });
    await store.jobClaim({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', limit: 1, queues: ['imports-with-a-long-queue-name'], leaseMs: 30_000 });
    await store.jobCompleteMany({ workerId: 'node-0190a5a0-0000-7000-8000-000000000001', outcomes: [{ jobId: batch.jobs[0]!.id, attempt: 1, kind: 'dead_lettered', error: stack }] });
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'report.weekly', cron: '0 9 * * 1', timezone: 'Europe/Berlin', queue: 'reports' } });
    await store.concurrencyLimitSet({ target: { key: 'tenant-with-a-long-key-0190a5a0-0000-7000-8000-000000000001' }, max: 3 });
    await store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 10, perMs: 60_000 } });
    await store.nodeBeat({ id: 'node-0190a5a0-0000-7000-8000-000000000001', host: 'ip-10-0-12-34.eu-central-1.compute.internal', pid: 4242, version: '0.1.0', queues: ['mail', 'reports', 'failing'], concurrency: 8, running: 0 });
    await store.queuePause({ queue: 'reports', actor: 'ops@example.com' });
    paths.push(`/jobs/${id}`, `/jobs/${id}/replay`, `/schedules/${schedule.id}`, '/queues/mail', `/batches/${batch.batchId}`, `/batches/${batch.batchId}/cancel`, `/jobs/${batch.callbacks.onFailure}`);
    server = await startDashboardServer({ store });
  });

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it('issue 35 item 22: no page is wider than the screen, and the navigation stays inside its bar', async () => {
    const { page } = chromium;
    const failed: string[] = [];
    const onResponse = (response: Response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    };
    page.on('response', onResponse);
    for (const path of paths) {
      const response = await page.goto(server.url + path);
      expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
      const layout = await page.evaluate(() => {
        const header = document.querySelector('header')!.getBoundingClientRect();
        const links = Array.from(document.querySelectorAll('header nav a')).map((a) => a.getBoundingClientRect());
        return {
          pageWidth: document.documentElement.scrollWidth,
          bodyWidth: document.body.scrollWidth,
          linksInBar: links.every((r) => r.left >= header.left && r.right <= header.right && r.top >= header.top && r.bottom <= header.bottom),
          links: links.length,
          // A table wider than the screen sits in a box of its own that scrolls.
          tablesContained: Array.from(document.querySelectorAll('table')).every((table) => {
            const box = table.parentElement!;
            return box.classList.contains('scroll') && box.getBoundingClientRect().right <= window.innerWidth;
          }),
        };
      });
      const widest = Math.max(layout.pageWidth, layout.bodyWidth);
      expect({ path, width: widest <= PHONE.width ? 'fits' : `${widest} px`, linksInBar: layout.linksInBar, links: layout.links, tablesContained: layout.tablesContained }).toEqual({
        path,
        width: 'fits',
        linksInBar: true,
        links: 12,
        tablesContained: true,
      });
    }
    page.off('response', onResponse);
    expect(failed).toEqual([]);
  });
});
