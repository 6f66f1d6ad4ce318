import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Job, SCHEDULER_STORE, SchedulerModule, SchedulerOrchestrator, type JobHandler, type PostgresJobStore } from '../../lib/index.js';
import { SchedulerHealthIndicator, SchedulerHealthModule } from '../../lib/terminus/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

@Job('health.noop')
class Noop implements JobHandler {
  async handle() {}
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly scheduler: SchedulerHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.scheduler.isHealthy('scheduler', { maxDeadLetters: 0 })]);
  }
}

describe('the terminus health indicator on PostgreSQL', () => {
  const schema = uniqueSchema('health');
  let app: INestApplication;
  let base: string;
  let store: PostgresJobStore;

  const get = async () => {
    const response = await fetch(`${base}/health`);
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl(), extra: { max: 6 } }),
        SchedulerModule.forRoot({ schema, pollIntervalMs: 200, heartbeatIntervalMs: 10_000, leaseMs: 60_000 }),
        SchedulerHealthModule,
      ],
      controllers: [HealthController],
      providers: [Noop],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    store = app.get(SCHEDULER_STORE);
    if (store.wakeListener.pid === undefined) await store.wakeListener.nextConnection();
    // The node's first registry beat is in flight at boot; the registry is what the first case reads.
    while ((await store.nodeList()).length === 0);
  });

  afterAll(async () => {
    await app.close();
    const admin = await openPostgresDataSource(1);
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  });

  it('answers 200 with the worker, its last contact, the wake listener and the node registry', async () => {
    const { status, body } = await get();
    expect([status, body.error]).toEqual([200, {}]);
    expect(body.details.scheduler).toMatchObject({ status: 'up', worker: 'running', wakeListener: 'connected', deadLetters: 0, nodes: { live: 1, known: 1 } });
    expect(body.details.scheduler.lastContactAt === null || Date.parse(body.details.scheduler.lastContactAt) <= Date.now()).toBe(true);
  });

  it('answers 503 while the wake listener’s backend is killed, and 200 once it reconnects', async () => {
    // Hold the listener's reconnect until the test has asked, so the outage is seen whatever the machine's speed.
    const listener = store.wakeListener as unknown as { pool: { connect: () => Promise<unknown> } };
    const pool = listener.pool;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    listener.pool = { ...pool, connect: async () => (await gate, pool.connect()) } as typeof pool;
    const reconnected = store.wakeListener.nextConnection();
    const [{ terminated }] = await app.get(DataSource).query('SELECT pg_terminate_backend($1) AS terminated', [store.wakeListener.pid]);
    expect(terminated).toBe(true);
    while (store.wakeListener.pid !== undefined) await new Promise((resolve) => setImmediate(resolve));
    const down = await get();
    expect(down.status).toBe(503);
    expect(down.body.error.scheduler).toMatchObject({ status: 'down', wakeListener: 'disconnected', message: 'the wake-up listener is disconnected.' });
    listener.pool = pool;
    open();
    await reconnected;
    expect((await get()).status).toBe(200);
  });

  it('answers 503 while the worker is stopped, and over a threshold', async () => {
    const orchestrator = app.get(SchedulerOrchestrator);
    await orchestrator.node.stop();
    const down = await get();
    expect(down.status).toBe(503);
    expect(down.body.error.scheduler.message).toMatch(/^the worker is stopped, not running/);
    // A job due a minute ago and no worker to run it: the oldest-due threshold is crossed too.
    await app.get(SCHEDULER_STORE).jobEnqueue({ job: { name: 'health.noop', payload: {}, runAt: new Date(Date.now() - 60_000) } });
    const result = await app.get(SchedulerHealthIndicator).isHealthy('scheduler', { maxOldestDueAgeMs: 30_000 });
    expect(result.scheduler).toMatchObject({ status: 'down' });
    expect((result.scheduler as unknown as { message: string }).message).toMatch(/the oldest due job has waited \d+ ms, over 30000 ms\.$/);
    await expect(app.get(SchedulerHealthIndicator).isHealthy('scheduler', { maxDeadLetters: -1 })).rejects.toThrow('maxDeadLetters must be a whole number of at least 0, got -1.');
  });
});
