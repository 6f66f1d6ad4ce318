import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { declaredScheduleId } from '../../lib/store/index.js';
import { SampleProcess } from './sample-process.js';

const run = promisify(execFile);

export function sampleCases(environment: () => Promise<{ env: Record<string, string>; conn: string; cleanup: () => Promise<void> }>): void {
  let sample: SampleProcess;
  let cleanup: () => Promise<void>;
  let conn: string;
  /** The built CLI, pointed at the sample's database. */
  const cli = (...args: string[]) => run(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args, '--conn', conn]);

  /** When a step ran: from its `running` entry to its `succeeded` entry, by the store's clock. */
  async function stepWindow(jobId: string): Promise<{ start: number; end: number }> {
    const { json } = await sample.request('GET', `/checkouts/jobs/${jobId}/history`);
    const at = (state: string) => Date.parse((json as Array<{ state: string; at: string }>).find((h) => h.state === state)!.at);
    return { start: at('running'), end: at('succeeded') };
  }

  beforeAll(async () => {
    const setup = await environment();
    cleanup = setup.cleanup;
    conn = setup.conn;
    sample = await SampleProcess.start(setup.env);
  });

  afterAll(async () => {
    if (sample) await sample.stop();
    await cleanup?.();
  });

  it('prints what to try on startup', () => {
    expect(sample.log).toContain(`curl -s -X POST ${sample.base.replace('127.0.0.1', 'localhost')}/orders`);
    expect(sample.log).toContain('/reports');
  });

  it('POST /orders commits the order and its confirmation job together, and the job confirms the order once', async () => {
    const placed = await sample.request('POST', '/orders', { item: 'lamp', quantity: 2 });
    expect(placed.status).toBe(201);
    expect(placed.json).toMatchObject({ committed: true });
    await sample.logLine(new RegExp(`order ${placed.json.orderId} confirmed`));
    const job = { json: await sample.jobSettled(placed.json.jobId, 'succeeded') };
    expect(job.json).toMatchObject({ name: 'orders.confirm', state: 'succeeded', attempt: 1, lastError: null, output: { confirmed: placed.json.orderId } });
    const order = await sample.request('GET', `/orders/${placed.json.orderId}`);
    expect(order.json).toMatchObject({ item: 'lamp', quantity: 2, status: 'confirmed' });
  });

  it('POST /orders?fail=1 rolls back both the order and its job, and says so', async () => {
    const placed = await sample.request('POST', '/orders?fail=1', { item: 'lamp' });
    expect(placed.json).toMatchObject({ committed: false, note: 'The transaction rolled back: neither the order nor its job exists.' });
    expect((await sample.request('GET', `/jobs/${placed.json.jobId}`)).status).toBe(404);
    expect((await sample.request('GET', `/orders/${placed.json.orderId}`)).status).toBe(404);
  });

  it('shows the retries of a job that fails twice, then succeeds', async () => {
    const { json } = await sample.request('POST', '/reports');
    await sample.logLine(new RegExp(`report ${json.reportId} built on attempt 3`));
    expect(sample.log).toMatch(new RegExp(`reports.flaky ${json.jobId} attempt 1 of 5 failed .*; retrying in \\d+ ms`));
    expect(sample.log).toMatch(new RegExp(`reports.flaky ${json.jobId} attempt 2 of 5 failed`));
    expect(await sample.jobSettled(json.jobId, 'succeeded')).toMatchObject({ state: 'succeeded', attempt: 3 });
  });

  it('delivers a one-shot reminder once, recorded under its occurrence id', async () => {
    const { json } = await sample.request('POST', '/reminders', { text: 'Call Ada', delayMs: 0 });
    const line = await sample.logLine(new RegExp(`reminders.send ${json.jobId} attempt 1: REMINDER "Call Ada"`));
    const job = await sample.jobSettled(json.jobId, 'succeeded');
    expect(line).toContain(`occurrence ${job.occurrenceId}`);
    expect(job).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('registers the recurring reminder at boot, and the CLI can trigger it', async () => {
    const id = declaredScheduleId('reminders.stretch');
    const { stdout } = await cli('schedules', 'list', '--format', 'json');
    const [schedule] = (JSON.parse(stdout) as Array<{ id: string; name: string; state: string; recurrence: unknown }>).filter((s) => s.name === 'reminders.stretch');
    expect(schedule).toMatchObject({ id, state: 'active', recurrence: { kind: 'cron', cron: '* * * * *', timezone: 'UTC' } });
    const triggered = await cli('schedules', 'trigger', id);
    const occurrence = /occurrence ([0-9a-f-]{36})/.exec(triggered.stdout)![1]!;
    await sample.logLine(new RegExp(`REMINDER "Stand up and stretch." \\(occurrence ${occurrence}`));
  });

  it('checks out in three dependent steps, each reading the outputs before it', async () => {
    const { json } = await sample.request('POST', '/checkouts', { customerId: 'c-solo', item: 'lamp' });
    const { checkoutId, jobs } = json;
    // Created together: the later steps wait on their parents.
    expect((await sample.request('GET', `/jobs/${jobs.ship}`)).json.state).toMatch(/awaiting_parents|scheduled|running/);
    await sample.jobSettled(jobs.ship, 'succeeded');
    const checkout = (await sample.request('GET', `/checkouts/${checkoutId}`)).json;
    expect(checkout).toMatchObject({ status: 'shipped', reservationId: expect.stringMatching(/^rsv-/), chargeId: expect.stringMatching(/^ch-/), trackingNumber: expect.stringMatching(/^trk-/) });
    const shipped = await sample.logLine(new RegExp(`checkout ${checkoutId} shipped`));
    expect(shipped).toContain(`for ${checkout.reservationId} / ${checkout.chargeId}`);
    const ends = await Promise.all([jobs.reserve, jobs.charge, jobs.ship].map((id: string) => stepWindow(id)));
    expect(ends[0]!.end).toBeLessThanOrEqual(ends[1]!.start);
    expect(ends[1]!.end).toBeLessThanOrEqual(ends[2]!.start);
  });

  it('runs one checkout step at a time per customer, while another customer goes ahead', async () => {
    const placed = await Promise.all([
      sample.request('POST', '/checkouts', { customerId: 'c-busy', item: 'desk' }),
      sample.request('POST', '/checkouts', { customerId: 'c-busy', item: 'chair' }),
      sample.request('POST', '/checkouts', { customerId: 'c-other', item: 'rug' }),
    ]);
    const ids = placed.map((p) => p.json.jobs);
    for (const jobs of ids) await sample.jobSettled(jobs.ship, 'succeeded');
    const busy = await Promise.all(ids.slice(0, 2).flatMap((jobs) => [jobs.reserve, jobs.charge, jobs.ship]).map((id: string) => stepWindow(id)));
    busy.sort((a, b) => a.start - b.start);
    for (let i = 1; i < busy.length; i++) expect(busy[i]!.start).toBeGreaterThanOrEqual(busy[i - 1]!.end);
  });

  it('dead-letters a declined charge, cancels the shipping, and the observer posts it to the log', async () => {
    const { json } = await sample.request('POST', '/checkouts', { customerId: 'c-declined', item: 'lamp', paymentMethod: 'declined' });
    await sample.jobSettled(json.jobs.charge, 'dead_lettered');
    const ship = await sample.jobSettled(json.jobs.ship, 'cancelled');
    expect(ship.lastError).toContain(json.jobs.charge);
    const line = await sample.logLine(new RegExp(`DEAD LETTER checkout.charge ${json.jobs.charge} after attempt 1: PermanentJobError: the card was declined`));
    expect(line).toMatch(/\(event \d+\)/);
    expect((await sample.request('GET', `/checkouts/${json.checkoutId}`)).json.status).toBe('reserved');
  });

  it('charges a replayed charge once the customer has changed the declined card', async () => {
    const { json } = await sample.request('POST', '/checkouts', { customerId: 'c-recard', item: 'lamp', paymentMethod: 'declined' });
    await sample.jobSettled(json.jobs.charge, 'dead_lettered');
    // Replayed as it is, the charge is declined again.
    await cli('dead-letter', 'replay', json.jobs.charge);
    await sample.jobSettled(json.jobs.charge, 'dead_lettered');
    const history = (await sample.request('GET', `/checkouts/jobs/${json.jobs.charge}/history`)).json as Array<{ state: string }>;
    expect(history.filter((entry) => entry.state === 'dead_lettered')).toHaveLength(2);
    const changed = await sample.request('PUT', `/checkouts/${json.checkoutId}/payment-method`, { paymentMethod: 'card' });
    expect(changed).toMatchObject({ status: 200, json: { checkoutId: json.checkoutId, paymentMethod: 'card' } });
    await cli('dead-letter', 'replay', json.jobs.charge);
    expect(await sample.jobSettled(json.jobs.charge, 'succeeded')).toMatchObject({ attempt: 1, output: { chargeId: expect.stringMatching(/^ch-/) } });
    expect((await sample.request('GET', `/checkouts/${json.checkoutId}`)).json).toMatchObject({ status: 'charged', paymentMethod: 'card' });
    expect((await sample.request('PUT', `/checkouts/${json.checkoutId}/payment-method`, { paymentMethod: 'cash' })).status).toBe(400);
  });

  it('answers a bad job id with a 400 and one sentence', async () => {
    const response = await sample.request('GET', '/jobs/not-a-uuid');
    expect(response).toMatchObject({ status: 400, json: { message: 'jobId must be a UUID, got "not-a-uuid".' } });
    expect(await sample.request('GET', '/checkouts/jobs/not-a-uuid/history')).toMatchObject({ status: 400, json: { message: 'jobId must be a UUID, got "not-a-uuid".' } });
  });

  it('issue 19 item 11: takes a job id of any version and variant, as the library does', async () => {
    const id = '00000000-0000-0000-0000-000000000001';
    expect(await sample.request('GET', `/jobs/${id.replaceAll('-', '')}`)).toMatchObject({ status: 404, json: { message: `No job ${id.replaceAll('-', '')}.` } });
    expect(await sample.request('GET', `/checkouts/jobs/${id}/history`)).toMatchObject({ status: 200, json: [] });
  });

  it('drains and exits on SIGTERM', async () => {
    // Nest runs the shutdown hooks, then re-raises the signal to end the process.
    const exit = await sample.stop();
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    expect(sample.log).toMatch(/worker \S+ stopped\./);
  });
}
