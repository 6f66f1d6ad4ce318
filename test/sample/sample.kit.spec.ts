import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SchedulerClient, SchedulerOrchestrator } from '../../lib/index.js';
import { declaredScheduleId } from '../../lib/store/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { CheckoutService } from '../../sample/checkout/checkout.service.js';
import { OrderConfirmation } from '../../sample/orders/order-confirmation.entity.js';
import { OrdersService, RolledBack } from '../../sample/orders/orders.service.js';
import { ReminderDelivery } from '../../sample/reminders/reminder-delivery.entity.js';
import { RemindersController } from '../../sample/reminders/reminders.controller.js';
import { ReportsController } from '../../sample/reports/reports.controller.js';
import { SAMPLE_ENTITIES, SampleModule } from '../../sample/sample.module.js';

/**
 * The sample's behaviour, in process, with the testing kit: its own module, on SQLite in memory
 * through its TypeORM entities, the scheduler on a manual clock. `sample.cases.ts` keeps what only
 * a real `npm start` process can show (it boots, serves HTTP, talks to the CLI, drains on SIGTERM).
 */
describe('the sample app, tested with nestjs-durable-scheduler/testing', () => {
  let app: INestApplicationContext;
  let tester: SchedulerTester;
  let client: SchedulerClient;
  let dataSource: DataSource;
  const previousStepMs = process.env.SAMPLE_STEP_MS;

  beforeAll(() => {
    // The checkout steps stand in for a remote call with a real timer; a short one keeps that path.
    process.env.SAMPLE_STEP_MS = '5';
  });

  afterAll(() => {
    if (previousStepMs === undefined) delete process.env.SAMPLE_STEP_MS;
    else process.env.SAMPLE_STEP_MS = previousStepMs;
  });

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:', entities: SAMPLE_ENTITIES, synchronize: true }),
        SchedulerTestingModule.forRoot({ store: 'sqlite', concurrency: 4 }),
        SampleModule.forRoot({ observers: true }),
      ],
    })
      .setLogger(false as unknown as Logger)
      .compile();
    app = await moduleRef.init();
    tester = app.get(SchedulerTester);
    client = app.get(SchedulerClient);
    dataSource = app.get(DataSource);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await app.close();
  });

  it('commits an order and its confirmation job together, and the job confirms the order once', async () => {
    const { orderId, jobId } = await app.get(OrdersService).place('lamp', 2, false);
    await tester.expectEnqueued('orders.confirm', { orderId });
    expect(await tester.drain()).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(await client.get(jobId)).toMatchObject({ state: 'succeeded', attempt: 1, output: { confirmed: orderId } });
    expect(await app.get(OrdersService).find(orderId)).toMatchObject({ item: 'lamp', quantity: 2, status: 'confirmed' });
    expect(await dataSource.getRepository(OrderConfirmation).findBy({ orderId })).toHaveLength(1);
  });

  it('rolls back both the order and its job', async () => {
    const error = await app.get(OrdersService).place('lamp', 1, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RolledBack);
    expect(await tester.enqueued('orders.confirm')).toEqual([]);
    expect(await app.get(OrdersService).find((error as RolledBack & { orderId: string }).orderId)).toBeNull();
  });

  it('retries a confirmation that fails once, through the backoff its enqueue set', async () => {
    const { jobId } = await app.get(OrdersService).place('lamp', 1, false, true);
    expect(await tester.drain()).toMatchObject({ attempts: 1, retried: 1, waiting: 1 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1, advancedMs: 400 });
    expect(await client.get(jobId)).toMatchObject({ state: 'succeeded', attempt: 2 });
  });

  it('runs the report that fails twice, then succeeds', async () => {
    const { jobId, reportId } = await app.get(ReportsController).build();
    const summary = await tester.drain({ advanceTime: true });
    expect(summary).toMatchObject({ attempts: 3, retried: 2, succeeded: 1, waiting: 0 });
    expect(await client.get(jobId)).toMatchObject({ state: 'succeeded', attempt: 3, output: { reportId, pages: 12 } });
  });

  it('delivers a one-shot reminder at its time, once, under its occurrence id', async () => {
    const { jobId } = await app.get(RemindersController).remind({ text: 'Call Ada', delayMs: 5_000 });
    expect(await tester.drain()).toMatchObject({ attempts: 0, waiting: 1 });
    await tester.advance(5_000);
    await tester.drain();
    const job = await client.get(jobId);
    expect(job).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(await dataSource.getRepository(ReminderDelivery).findBy({ occurrenceId: job!.occurrenceId })).toEqual([
      expect.objectContaining({ text: 'Call Ada' }),
    ]);
  });

  it('registers the recurring reminder at boot, and delivers it every minute', async () => {
    const schedule = await client.getSchedule(declaredScheduleId('reminders.stretch'));
    expect(schedule).toMatchObject({ state: 'active', recurrence: { kind: 'cron', cron: '* * * * *', timezone: 'UTC' } });
    await tester.advance(120_000);
    await tester.drain();
    const deliveries = await dataSource.getRepository(ReminderDelivery).findBy({ text: 'Stand up and stretch.' });
    expect(deliveries.length).toBeGreaterThanOrEqual(2);
  });

  it('checks out in three dependent steps, each reading the outputs before it', async () => {
    const checkouts = app.get(CheckoutService);
    const { checkoutId, jobs } = await checkouts.place('c-solo', 'lamp', 'card');
    expect((await client.get(jobs.ship))?.state).toBe('awaiting_parents');
    expect(await tester.drain()).toMatchObject({ attempts: 3, succeeded: 3, waiting: 0 });
    const checkout = await checkouts.find(checkoutId);
    expect(checkout).toMatchObject({ status: 'shipped', reservationId: expect.stringMatching(/^rsv-/), chargeId: expect.stringMatching(/^ch-/), trackingNumber: expect.stringMatching(/^trk-/) });
    expect((await client.get(jobs.charge))?.output).toEqual({ chargeId: checkout!.chargeId, reservationId: checkout!.reservationId });
  });

  it('runs one checkout step at a time per customer, while another customer goes ahead', async () => {
    const customerOf = new Map<string, string>();
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const events = app.get(SchedulerOrchestrator).node.events;
    events.on('attemptStarted', ({ jobId }) => {
      const customer = customerOf.get(jobId)!;
      running.set(customer, (running.get(customer) ?? 0) + 1);
      most.set(customer, Math.max(most.get(customer) ?? 0, running.get(customer)!));
    });
    events.on('settled', ({ jobId }) => running.set(customerOf.get(jobId)!, running.get(customerOf.get(jobId)!)! - 1));
    const checkouts = app.get(CheckoutService);
    for (const [customer, item] of [['c-busy', 'desk'], ['c-busy', 'chair'], ['c-other', 'rug']] as const) {
      const { jobs } = await checkouts.place(customer, item, 'card');
      for (const id of Object.values(jobs)) customerOf.set(id, customer);
    }
    expect(await tester.drain()).toMatchObject({ attempts: 9, succeeded: 9, waiting: 0 });
    expect(most.get('c-busy')).toBe(1);
    expect(most.get('c-other')).toBe(1);
  });

  it('dead-letters a declined charge, cancels the shipping, and the observer posts it to the log', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { checkoutId, jobs } = await app.get(CheckoutService).place('c-declined', 'lamp', 'declined');
    expect(await tester.drain()).toMatchObject({ succeeded: 1, deadLettered: 1 });
    expect(await client.get(jobs.charge)).toMatchObject({ state: 'dead_lettered' });
    const ship = await client.get(jobs.ship);
    expect(ship).toMatchObject({ state: 'cancelled' });
    expect(ship!.lastError).toContain(jobs.charge);
    const lines = warn.mock.calls.map(([line]) => String(line));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^DEAD LETTER checkout.charge ${jobs.charge} after attempt 1: PermanentJobError: the card was declined \\(event \\d+\\)$`)));
    expect((await app.get(CheckoutService).find(checkoutId))?.status).toBe('reserved');
  });

  it('charges a replayed charge once the customer has changed the declined card', async () => {
    const checkouts = app.get(CheckoutService);
    const { checkoutId, jobs } = await checkouts.place('c-recard', 'lamp', 'declined');
    await tester.drain();
    await client.replay(jobs.charge);
    expect(await tester.drain()).toMatchObject({ attempts: 1, deadLettered: 1 });
    expect((await client.history(jobs.charge)).filter((entry) => entry.state === 'dead_lettered')).toHaveLength(2);
    expect(await checkouts.changePaymentMethod(checkoutId, 'card')).toBe(true);
    await client.replay(jobs.charge);
    expect(await tester.drain()).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(await client.get(jobs.charge)).toMatchObject({ state: 'succeeded', attempt: 1, output: { chargeId: expect.stringMatching(/^ch-/) } });
    expect(await checkouts.find(checkoutId)).toMatchObject({ status: 'charged', paymentMethod: 'card' });
  });
});
