import { afterEach, describe, expect, it } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SchedulerClient } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule, type SchedulerTestingOptions } from '../../lib/testing/index.js';
import { ConfirmOrderJob, Order, OrdersController } from './fixtures/orders.js';

describe('the testing kit on the application\'s TypeORM DataSource (SQLite, no server)', () => {
  let app: TestingModule | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(kit: SchedulerTestingOptions = { store: 'sqlite' }) {
    app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:', entities: [Order], synchronize: true }),
        SchedulerTestingModule.forRoot(kit),
      ],
      controllers: [OrdersController],
      providers: [ConfirmOrderJob],
    }).compile();
    await app.init();
    return app;
  }

  // The user test of docs/testing.md, as it is there.
  it('confirms a placed order', async () => {
    const app = await boot();
    const order = await app.get(OrdersController).place('lamp');
    const tester = app.get(SchedulerTester);
    await tester.expectEnqueued('orders.confirm', { orderId: order.id });
    await tester.drain();
    expect(await app.get(OrdersController).get(order.id)).toMatchObject({ status: 'confirmed' });
  });

  it('stamps the jobs with the kit\'s clock, not the database\'s', async () => {
    const app = await boot();
    const tester = app.get(SchedulerTester);
    const { id } = await app.get(SchedulerClient).enqueue('orders.confirm', { orderId: 'none' }, { delayMs: 1_000 });
    expect((await app.get(SchedulerClient).get(id))?.runAt.getTime()).toBe(tester.now().getTime() + 1_000);
  });

  it('in inline mode, runs an enqueue made in the host\'s transaction at the next drain, after the commit', async () => {
    const app = await boot({ store: 'sqlite', inline: true });
    const order = await app.get(OrdersController).place('lamp');
    expect(await app.get(OrdersController).get(order.id)).toMatchObject({ status: 'pending' });
    expect(await app.get(SchedulerTester).drain()).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(await app.get(OrdersController).get(order.id)).toMatchObject({ status: 'confirmed' });
  });

  it('refuses the sqlite store without a better-sqlite3 DataSource, in one sentence', async () => {
    const compiled = Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot({ store: 'sqlite' })] }).compile();
    await expect(compiled).rejects.toThrow('The sqlite store runs on the application\'s TypeORM DataSource; register one with TypeOrmModule.forRoot({ type: "better-sqlite3", ... }).');
  });
});
