import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { declaredScheduleId } from '../../lib/store/index.js';
import { SampleProcess } from './sample-process.js';

const run = promisify(execFile);

/**
 * What only a real `npm start` process shows: it boots and prints what to try, serves HTTP over
 * the database it was given, works with the CLI, and drains on SIGTERM. The sample's behaviour
 * (retries, reminders, the checkout's steps, limits and observer) is tested in process with the
 * testing kit, in `sample.kit.spec.ts`.
 */
export function sampleCases(environment: () => Promise<{ env: Record<string, string>; conn: string; cleanup: () => Promise<void> }>): void {
  let sample: SampleProcess;
  let cleanup: () => Promise<void>;
  let conn: string;
  /** The built CLI, pointed at the sample's database. */
  const cli = (...args: string[]) => run(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args, '--conn', conn]);

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

  it('registers the recurring reminder at boot, and the CLI can trigger it', async () => {
    const id = declaredScheduleId('reminders.stretch');
    const { stdout } = await cli('schedules', 'list', '--format', 'json');
    const [schedule] = (JSON.parse(stdout) as Array<{ id: string; name: string; state: string; recurrence: unknown }>).filter((s) => s.name === 'reminders.stretch');
    expect(schedule).toMatchObject({ id, state: 'active', recurrence: { kind: 'cron', cron: '* * * * *', timezone: 'UTC' } });
    const triggered = await cli('schedules', 'trigger', id);
    const occurrence = /occurrence ([0-9a-f-]{36})/.exec(triggered.stdout)![1]!;
    await sample.logLine(new RegExp(`REMINDER "Stand up and stretch." \\(occurrence ${occurrence}`));
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
