/**
 * The dashboard in a real browser once more, with the sample app on MariaDB (DATABASE_URL set to a
 * mysql:// URL): the overview's counts, the job filter, a replay and a queue's pause, the parts
 * whose reads and writes the MySQL store answers. dashboard.e2e.ts walks every page on SQLite;
 * this file checks that the same operator flow holds on the other store. It needs the machine's
 * MariaDB (MARIADB_URL, or mysql://root@127.0.0.1:3306/test), where it makes a database of its own
 * and drops it afterwards. Screenshots are left to dashboard.e2e.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import type { DataSource } from 'typeorm';
import { SampleProcess } from '../test/sample/sample-process.js';
import { mariadbUrl, openMariadbDataSource } from '../test/support/mariadb.js';
import { launchChromium, type Chromium } from './support/chromium.js';

const run = promisify(execFile);
/** How long a wait on the live refresh may take: four ticks of 5 s. */
const LIVE_WAIT_MS = 20_000;
/** A replayed job's run on a busy machine (the sample settles a job within 15 s), then the refresh that shows it. */
const RUN_AND_REFRESH_MS = 15_000 + LIVE_WAIT_MS;

describe('the dashboard in Chromium, on the sample app (MariaDB)', () => {
  const database = `sample_e2e_${randomBytes(4).toString('hex')}`;
  const conn = (() => {
    const url = new URL(mariadbUrl());
    url.pathname = `/${database}`;
    return url.toString().replace(/^[a-z]+:/, 'mysql:');
  })();
  let admin: DataSource | undefined;
  let sample: SampleProcess;
  let chromium: Chromium;
  let page: Page;
  /** Jobs the setup leaves behind, by what they show. */
  const made = { succeeded: [] as string[], deadLettered: [] as string[], cancelled: [] as string[], waiting: '' };

  /** The built CLI on the sample's database. */
  const cli = async (...args: string[]) => (await run(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args, '--conn', conn])).stdout;
  const url = (path: string) => `${sample.base}/scheduler${path}`;
  const visit = async (path: string) => {
    const response = await page.goto(url(path));
    expect(response?.status()).toBe(200);
  };
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
    // The browser first, then the server: without either, the run stops at once with the sentence that says what to install.
    chromium = await launchChromium();
    page = chromium.page;
    admin = await openMariadbDataSource({ poolSize: 1 });
    await admin.query(`CREATE DATABASE \`${database}\``);
    sample = await SampleProcess.start({ DATABASE_URL: conn });
    expect(sample.log).toMatch(/storing jobs in MySQL/);

    for (const item of ['lamp', 'desk']) {
      const { json } = await sample.request('POST', '/orders', { item, quantity: 1 });
      made.succeeded.push(json.jobId);
    }
    const checkout = await sample.request('POST', '/checkouts', { customerId: 'c-ada', item: 'chair' });
    made.succeeded.push(checkout.json.jobs.reserve, checkout.json.jobs.charge, checkout.json.jobs.ship);
    const noStock = await sample.request('POST', '/checkouts', { customerId: 'c-bob', item: 'unobtainium' });
    made.deadLettered.push(noStock.json.jobs.reserve);
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
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.destroy();
    }
  });

  it('shows each queue with its counts by state on the overview, as the CLI reads them', async () => {
    await visit('');
    expect(await text('h1')).toBe('Overview');
    const row = await queueRow('default');
    const [stored] = (JSON.parse(await cli('queues', 'list', '--format', 'json')) as Array<{ name: string; counts: Record<string, number> }>).filter((q) => q.name === 'default');
    expect(row).toMatchObject({ Queue: 'default', 'dead lettered': String(stored!.counts.dead_lettered), cancelled: String(stored!.counts.cancelled ?? 0), Claiming: 'active', '#11': 'Pause' });
    expect(Number(row['dead lettered'])).toBe(made.deadLettered.length);
    expect(Number(row.cancelled)).toBe(made.cancelled.length);
    // The recurring reminder adds a succeeded job every minute, so that count is a floor.
    expect(Number(row.succeeded)).toBeGreaterThanOrEqual(made.succeeded.length);
    expect(Number(row.scheduled)).toBeGreaterThanOrEqual(1);
    const cards = await page.locator('#totals .card').evaluateAll((links) => Object.fromEntries(links.map((a) => [a.querySelector('.label')!.textContent, a.querySelector('.value')!.textContent])));
    expect(cards).toMatchObject({ 'Dead-lettered': String(made.deadLettered.length), 'Running nodes': '1' });
    const caption = await text('#throughput figcaption');
    expect(Number(/^All queues: (\d+) finished in the last hour/.exec(caption)?.[1])).toBeGreaterThanOrEqual(made.succeeded.length + made.deadLettered.length);
  });

  it('filters the job list by state with the Filter button', async () => {
    await visit('/jobs');
    const idsOf = () => page.locator('#jobs tbody a.id').allTextContents();
    expect([...new Set(await page.locator('#jobs tbody .state').allTextContents())]).toEqual(expect.arrayContaining(['succeeded', 'dead lettered', 'cancelled', 'scheduled']));

    await page.selectOption('form.filters select[name="state"]', 'dead_lettered');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL((address) => address.searchParams.get('state') === 'dead_lettered');
    expect(new Set(await page.locator('#jobs tbody .state').allTextContents())).toEqual(new Set(['dead lettered']));
    expect((await idsOf()).sort()).toEqual([...made.deadLettered].sort());

    await page.selectOption('form.filters select[name="state"]', 'cancelled');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL((address) => address.searchParams.get('state') === 'cancelled');
    expect((await idsOf()).sort()).toEqual([...made.cancelled].sort());
  });

  it('replays a dead letter through its confirmation page, and the job ends succeeded', async () => {
    const declined = await declinedCheckout('c-replay');
    // The sample's declined card fails again on replay until the customer changes it.
    expect((await sample.request('PUT', `/checkouts/${declined.checkoutId}/payment-method`, { paymentMethod: 'card' })).status).toBe(200);

    await visit('/dead-letters');
    await page.locator('#dead-letters a.id', { hasText: declined.charge }).click();
    await page.waitForURL(url(`/jobs/${declined.charge}`));
    expect(await text('#job dl.fields .state')).toBe('dead lettered');

    await page.locator('#job p.actions a.action', { hasText: 'Replay' }).click();
    await page.waitForURL(url(`/jobs/${declined.charge}/replay`));
    expect(await text('h1')).toBe('Replay this job?');
    await page.click('form.confirm button[type="submit"]');
    await page.waitForURL((address) => address.pathname.endsWith(`/jobs/${declined.charge}`) && address.searchParams.get('notice') === 'job.replayed');
    expect(await text('p.notice')).toBe('The job was replayed: it is due now, with its attempts reset.');

    await page.waitForFunction(() => document.querySelector('#job dl.fields .state')?.textContent === 'succeeded', undefined, { timeout: RUN_AND_REFRESH_MS });
    expect(await sample.jobSettled(declined.charge, 'succeeded')).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect((await sample.request('GET', `/checkouts/${declined.checkoutId}`)).json.status).toBe('charged');
    expect(JSON.parse(await cli('jobs', 'show', declined.charge, '--format', 'json'))).toMatchObject({ id: declined.charge, state: 'succeeded' });
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
      expect(JSON.parse(await cli('queues', 'list', '--paused', '--format', 'json'))).toEqual([expect.objectContaining({ name: 'default', paused: true })]);

      await visit(`/jobs/${made.waiting}`);
      const paused = await page.locator('#why').textContent();
      expect(paused).toContain('Its queue default is paused: no worker claims its jobs until it is resumed.');

      await page.locator('#why a.action', { hasText: 'Resume' }).click();
      await page.waitForURL(url('/queues/default/resume'));
      await page.click('form.confirm button[type="submit"]');
      await page.waitForURL((address) => address.searchParams.get('notice') === 'queue.resumed');
      expect((await queueRow('default')).Claiming).toBe('active');
      await visit(`/jobs/${made.waiting}`);
      expect(await page.locator('#why').textContent()).not.toContain('paused');
    } finally {
      // Whatever failed above, leave the sample's queue claiming.
      await cli('queues', 'resume', 'default');
    }
  });
});
