/**
 * The dashboard in a real browser: Chromium drives the built sample app (`dist/sample/main.js`) on a
 * SQLite file of its own, through the pages an operator uses. Every wait is bounded and waits on a
 * page condition, never on time alone; the live refresh ticks every 5 s, so waits on it allow 20 s.
 *
 * Screenshots at 1280×800 go to `E2E_SCREENSHOT_DIR`, or to a temporary directory that is removed
 * afterwards. `E2E_SCREENSHOT_DIR=docs/screenshots npm run test:e2e` refreshes the documentation's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { declaredScheduleId } from '../lib/store/index.js';
import { SampleProcess } from '../test/sample/sample-process.js';
import { launchChromium, type Chromium } from './support/chromium.js';

const run = promisify(execFile);
/** How long a wait on the live refresh may take: four ticks of 5 s. */
const LIVE_WAIT_MS = 20_000;
/** A replayed job's run on a busy machine (the sample settles a job within 15 s), then the refresh that shows it. */
const RUN_AND_REFRESH_MS = 15_000 + LIVE_WAIT_MS;

describe('the dashboard in Chromium, on the sample app (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-e2e-'));
  const sqliteFile = join(dir, 'sample.db');
  const shots = process.env.E2E_SCREENSHOT_DIR ? resolve(process.env.E2E_SCREENSHOT_DIR) : join(dir, 'screenshots');
  let sample: SampleProcess;
  let chromium: Chromium;
  let page: Page;
  /** Jobs the setup leaves behind, by what they show. */
  const made = { succeeded: [] as string[], deadLettered: [] as string[], cancelled: [] as string[], waiting: '' };

  /** The built CLI on the sample's database. */
  const cli = async (...args: string[]) => (await run(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args, '--conn', `sqlite:${sqliteFile}`])).stdout;
  const url = (path: string) => `${sample.base}/scheduler${path}`;
  const visit = async (path: string) => {
    const response = await page.goto(url(path));
    expect(response?.status()).toBe(200);
  };
  const screenshot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`) });
  /** The text of an element, or '' when there is none. */
  const text = async (selector: string) => ((await page.locator(selector).count()) ? ((await page.locator(selector).first().textContent()) ?? '') : '');
  /** The overview's cells for queue `name`, by column head. */
  async function queueRow(name: string): Promise<Record<string, string>> {
    return page.evaluate((queue) => {
      const heads = Array.from(document.querySelectorAll('#queues thead th')).map((th) => th.textContent!.trim());
      const row = Array.from(document.querySelectorAll('#queues tbody tr')).find((tr) => tr.querySelector('th')?.textContent?.trim() === queue);
      if (!row) return {};
      return Object.fromEntries(Array.from(row.children).map((cell, i) => [heads[i] || `#${i}`, cell.textContent!.trim()]));
    }, name);
  }

  async function declinedCheckout(customerId: string): Promise<{ checkoutId: string; charge: string; ship: string }> {
    const { json } = await sample.request('POST', '/checkouts', { customerId, item: 'lamp', paymentMethod: 'declined' });
    await sample.jobSettled(json.jobs.charge, 'dead_lettered');
    await sample.jobSettled(json.jobs.ship, 'cancelled');
    return { checkoutId: json.checkoutId, charge: json.jobs.charge, ship: json.jobs.ship };
  }

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    // The browser first: without one, the run stops at once with the sentence that says what to install.
    chromium = await launchChromium();
    page = chromium.page;
    sample = await SampleProcess.start({ SAMPLE_SQLITE_FILE: sqliteFile, DATABASE_URL: '' });

    // Something of every kind for the pages to show: finished work, a retried job, dead letters
    // with the steps they cancelled, and a job that waits an hour.
    for (const item of ['lamp', 'desk']) {
      const { json } = await sample.request('POST', '/orders', { item, quantity: 1 });
      made.succeeded.push(json.jobId);
    }
    const report = await sample.request('POST', '/reports');
    made.succeeded.push(report.json.jobId);
    const checkout = await sample.request('POST', '/checkouts', { customerId: 'c-ada', item: 'chair' });
    made.succeeded.push(checkout.json.jobs.reserve, checkout.json.jobs.charge, checkout.json.jobs.ship);
    const noStock = await sample.request('POST', '/checkouts', { customerId: 'c-bob', item: 'unobtainium' });
    made.deadLettered.push(noStock.json.jobs.reserve);
    // Both later steps: the charge by its dead parent, the shipping by its cancelled one.
    made.cancelled.push(noStock.json.jobs.charge, noStock.json.jobs.ship);
    const declined = await declinedCheckout('c-eve');
    made.deadLettered.push(declined.charge);
    made.cancelled.push(declined.ship);
    for (const id of made.succeeded) await sample.jobSettled(id, 'succeeded');
    for (const id of made.deadLettered) await sample.jobSettled(id, 'dead_lettered');
    for (const id of made.cancelled) await sample.jobSettled(id, 'cancelled');
    made.waiting = (await sample.request('POST', '/reminders', { text: 'Water the plants', delayMs: 3_600_000 })).json.jobId;
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await sample?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows each queue with its counts by state on the overview', async () => {
    await visit('');
    expect(await text('h1')).toBe('Overview');
    const heads = await page.locator('#queues thead th').allTextContents();
    expect(heads).toEqual(['Queue', 'scheduled', 'awaiting parents', 'running', 'succeeded', 'dead lettered', 'cancelled', 'quarantined', 'Due now', 'Oldest due waits', 'Claiming', '']);
    const row = await queueRow('default');
    // Finished jobs stay put; the recurring reminder adds a succeeded job every minute, so that one is a floor.
    const [stored] = (JSON.parse(await cli('queues', 'list', '--format', 'json')) as Array<{ name: string; counts: Record<string, number> }>).filter((q) => q.name === 'default');
    expect(row).toMatchObject({ Queue: 'default', 'dead lettered': String(stored!.counts.dead_lettered), cancelled: String(stored!.counts.cancelled ?? 0), Claiming: 'active', '#11': 'Pause' });
    expect(Number(row['dead lettered'])).toBe(made.deadLettered.length);
    expect(Number(row.cancelled)).toBe(made.cancelled.length);
    expect(Number(row.succeeded)).toBeGreaterThanOrEqual(made.succeeded.length);
    expect(Number(row.scheduled)).toBeGreaterThanOrEqual(1);
    const cards = await page.locator('#totals .card').evaluateAll((links) => Object.fromEntries(links.map((a) => [a.querySelector('.label')!.textContent, a.querySelector('.value')!.textContent])));
    expect(cards).toMatchObject({ 'Dead-lettered': String(made.deadLettered.length), Running: expect.stringMatching(/^\d+$/), Scheduled: expect.stringMatching(/^\d+$/), 'Running nodes': '1' });
    // The chart of the last hour counts at least the jobs this run finished.
    const caption = await text('#throughput figcaption');
    expect(Number(/^All queues: (\d+) finished in the last hour/.exec(caption)?.[1])).toBeGreaterThanOrEqual(made.succeeded.length + made.deadLettered.length);
    await screenshot('overview');
  });

  it('filters the job list by state with the Filter button', async () => {
    await visit('/jobs');
    const idsOf = () => page.locator('#jobs tbody a.id').allTextContents();
    const statesBefore = new Set(await page.locator('#jobs tbody .state').allTextContents());
    expect([...statesBefore]).toEqual(expect.arrayContaining(['succeeded', 'dead lettered', 'cancelled', 'scheduled']));
    await screenshot('jobs');

    await page.selectOption('form.filters select[name="state"]', 'dead_lettered');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL((address) => address.searchParams.get('state') === 'dead_lettered');
    expect(await page.inputValue('form.filters select[name="state"]')).toBe('dead_lettered');
    expect(new Set(await page.locator('#jobs tbody .state').allTextContents())).toEqual(new Set(['dead lettered']));
    expect((await idsOf()).sort()).toEqual([...made.deadLettered].sort());

    await page.selectOption('form.filters select[name="state"]', 'cancelled');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL((address) => address.searchParams.get('state') === 'cancelled');
    expect((await idsOf()).sort()).toEqual([...made.cancelled].sort());
  });

  it('refreshes a count in place, without reloading the page, when the store changes', async () => {
    await visit('');
    const deadLettered = () => page.locator('#totals .card', { hasText: 'Dead-lettered' }).locator('.value').textContent();
    const before = Number(await deadLettered());
    // A marker on this document: a reload or a navigation would drop it.
    await page.evaluate(() => ((window as unknown as { e2eMarker: string }).e2eMarker = 'set before the change'));

    const declined = await declinedCheckout('c-live');
    made.deadLettered.push(declined.charge);
    await page.waitForFunction(
      (expected) => {
        const card = Array.from(document.querySelectorAll('#totals .card')).find((a) => a.querySelector('.label')?.textContent === 'Dead-lettered');
        return card?.querySelector('.value')?.textContent === expected;
      },
      String(before + 1),
      { timeout: LIVE_WAIT_MS },
    );
    // The queue table is live too, and carries the same change.
    await page.waitForFunction((expected) => document.querySelector('#queues tbody tr td:nth-of-type(5)')?.textContent === expected, String(before + 1), { timeout: LIVE_WAIT_MS });
    const after = await page.evaluate(() => ({
      marker: (window as unknown as { e2eMarker?: string }).e2eMarker,
      navigations: performance.getEntriesByType('navigation').length,
      refreshed: document.documentElement.hasAttribute('data-refreshed'),
    }));
    expect(after).toEqual({ marker: 'set before the change', navigations: 1, refreshed: true });
  });

  it('replays a dead letter through its confirmation page, and the job ends succeeded', async () => {
    const declined = await declinedCheckout('c-replay');
    // The sample's declined card fails again on replay until the customer changes it.
    expect((await sample.request('PUT', `/checkouts/${declined.checkoutId}/payment-method`, { paymentMethod: 'card' })).status).toBe(200);

    await visit('/dead-letters');
    expect(await page.locator('#dead-letters tr.group-head').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\d+ × checkout\.charge: PermanentJobError: the card was declined/), expect.stringMatching(/^1 × checkout\.reserve: PermanentJobError: no stock of unobtainium/)]),
    );
    await screenshot('dead-letters');

    await page.locator('#dead-letters a.id', { hasText: declined.charge }).click();
    await page.waitForURL(url(`/jobs/${declined.charge}`));
    expect(await text('h1')).toBe('Job checkout.charge');
    expect(await text('#job dl.fields .state')).toBe('dead lettered');

    await page.locator('#job p.actions a.action', { hasText: 'Replay' }).click();
    await page.waitForURL(url(`/jobs/${declined.charge}/replay`));
    expect(await text('h1')).toBe('Replay this job?');
    await page.click('form.confirm button[type="submit"]');
    await page.waitForURL((address) => address.pathname.endsWith(`/jobs/${declined.charge}`) && address.searchParams.get('notice') === 'job.replayed');
    expect(await text('p.notice')).toBe('The job was replayed: it is due now, with its attempts reset.');

    // The worker runs it within a poll; the page shows the outcome on a live refresh.
    await page.waitForFunction(() => document.querySelector('#job dl.fields .state')?.textContent === 'succeeded', undefined, { timeout: RUN_AND_REFRESH_MS });
    expect(await sample.jobSettled(declined.charge, 'succeeded')).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(await page.locator('#job pre.output').textContent()).toContain('"chargeId": "ch-');
    expect((await sample.request('GET', `/checkouts/${declined.checkoutId}`)).json.status).toBe('charged');
  });

  it('replays ticked dead letters with Replay selected, after a confirmation that lists them', async () => {
    const declined = await declinedCheckout('c-bulk');
    await visit('/dead-letters');
    await page.locator(`#dead-letters input[name="id"][value="${declined.charge}"]`).check();
    await page.click('button:has-text("Replay selected")');
    await page.waitForURL(url('/dead-letters/replay'));
    expect(await text('h1')).toBe('Replay 1 dead letter?');
    expect(await page.locator('form.confirm ul.targets').textContent()).toContain(declined.charge);
    expect(await sample.jobSettled(declined.charge, 'dead_lettered')).toMatchObject({ state: 'dead_lettered' });
    await page.click('form.confirm button[type="submit"]');
    await page.waitForURL((address) => address.pathname.endsWith('/dead-letters') && address.searchParams.get('notice') === 'bulk.replayed');
    expect(await text('p.notice')).toBe('The selected dead letters were replayed.');
    // Replayed with the card still declined, it is dead-lettered again by its one attempt.
    expect(await sample.jobSettled(declined.charge, 'dead_lettered')).toMatchObject({ state: 'dead_lettered', attempt: 1 });
  });

  it('cancels a ticked dead letter with Cancel selected, which leaves the dead-letter list', async () => {
    const declined = await declinedCheckout('c-discard');
    await visit('/dead-letters');
    await page.locator(`#dead-letters input[name="id"][value="${declined.charge}"]`).check();
    // The button posts the same form to another address (formaction), under the page's CSP.
    await page.click('button:has-text("Cancel selected")');
    await page.waitForURL(url('/dead-letters/cancel'));
    expect(await text('h1')).toBe('Cancel 1 dead letter?');
    expect(await page.locator('form.confirm ul.targets').textContent()).toContain(declined.charge);
    await page.click('form.confirm button[type="submit"]');
    await page.waitForURL((address) => address.pathname.endsWith('/dead-letters') && address.searchParams.get('notice') === 'bulk.cancelled');
    expect(await page.locator(`#dead-letters input[name="id"][value="${declined.charge}"]`).count()).toBe(0);
    expect(await sample.jobSettled(declined.charge, 'cancelled')).toMatchObject({ state: 'cancelled' });
  });

  it('shows a schedule with its next fire times', async () => {
    await visit('/schedules');
    await page.locator('#schedules a.id', { hasText: declaredScheduleId('reminders.stretch') }).click();
    await page.waitForURL(url(`/schedules/${declaredScheduleId('reminders.stretch')}`));
    expect(await text('h1')).toBe('Schedule reminders.stretch');
    expect(await page.locator('#schedule dl.fields').textContent()).toContain('Pattern* * * * * (UTC)');
    expect(await page.locator('#schedule ol.fire-times li').count()).toBe(5);
    await screenshot('schedule');
  });

  it('pauses a queue after confirming, says so on a waiting job, and the reason goes when it is resumed', async () => {
    try {
      await visit('');
      await page.locator('#queues tbody tr', { has: page.locator('th', { hasText: /^default$/ }) }).locator('a.action', { hasText: 'Pause' }).click();
      await page.waitForURL(url('/queues/default/pause'));
      expect(await text('h1')).toBe('Pause queue default?');
      await page.click('form.confirm button[type="submit"]');
      await page.waitForURL((address) => address.searchParams.get('notice') === 'queue.paused');
      expect((await queueRow('default')).Claiming).toBe('paused');

      // The waiting job, found as an operator would: the queue's scheduled jobs.
      await visit('/jobs?queue=default&state=scheduled');
      await page.locator('#jobs a.id', { hasText: made.waiting }).click();
      await page.waitForURL(url(`/jobs/${made.waiting}`));
      const paused = await page.locator('#why').textContent();
      expect(paused).toContain('Why is this job not running?');
      expect(paused).toContain('Its run time is in the future');
      expect(paused).toContain('Its queue default is paused: no worker claims its jobs until it is resumed.');
      await screenshot('job-why');

      await page.locator('#why a.action', { hasText: 'Resume' }).click();
      await page.waitForURL(url('/queues/default/resume'));
      expect(await text('h1')).toBe('Resume queue default?');
      await page.click('form.confirm button[type="submit"]');
      await page.waitForURL((address) => address.searchParams.get('notice') === 'queue.resumed');
      expect((await queueRow('default')).Claiming).toBe('active');

      await visit(`/jobs/${made.waiting}`);
      const resumed = await page.locator('#why').textContent();
      expect(resumed).toContain('Its run time is in the future');
      expect(resumed).not.toContain('paused');
    } finally {
      // Whatever failed above, leave the sample's queue claiming.
      await cli('queues', 'resume', 'default');
    }
  });
});
