import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Injectable, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  InvalidArgumentError,
  Job,
  OnJobTransition,
  SchedulerClient,
  SchedulerModule,
  SchedulerOrchestrator,
  type JobContext,
  type JobHandler,
  type SchedulerModuleOptions,
  type TransitionEvent,
} from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { deferred, settled, tempSqlite } from './support.js';

@Job({ name: 'tenant.sync', concurrencyKey: (payload: { tenant: string }) => `tenant:${payload.tenant}`, concurrencyLimit: 2 })
class TenantSync implements JobHandler<{ tenant: string }> {
  async handle() {}
}

@Job({ name: 'report.render', concurrencyLimit: 1 })
class RenderReport implements JobHandler {
  async handle() {}
}

@Job({
  name: 'order.confirm',
  maxAttempts: 1,
  validate: (payload) => typeof (payload as { orderId?: unknown }).orderId === 'string',
})
class ConfirmOrder implements JobHandler<{ orderId: string }> {
  async handle(payload: { orderId: string }, ctx: JobContext) {
    if (payload.orderId === 'explode') throw new Error('warehouse offline');
    ctx.setOutput({ confirmed: payload.orderId });
  }
}

const shipped = deferred<unknown>();

@Job('order.ship')
class ShipOrder implements JobHandler<{ confirmId: string }> {
  async handle(payload: { confirmId: string }, ctx: JobContext) {
    shipped.resolve(await ctx.parentOutput(payload.confirmId));
  }
}

@Injectable()
class DeadLetterAlerts {
  readonly events: TransitionEvent[] = [];
  readonly arrived = deferred<TransitionEvent>();

  @OnJobTransition({ to: ['dead_lettered'], job: 'order.confirm' })
  record(event: TransitionEvent) {
    this.events.push(event);
    this.arrived.resolve(event);
  }
}

@Injectable()
class EmptyTo {
  @OnJobTransition({ to: [] })
  noop() {}
}

@Injectable()
class TwinA {
  @OnJobTransition({ to: ['succeeded'], id: 'twin' })
  a() {}
}

@Injectable()
class TwinB {
  @OnJobTransition({ to: ['succeeded'], id: 'twin' })
  b() {}
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedObserver {
  @OnJobTransition({ to: ['succeeded'] })
  seen() {}
}

async function bootError(options: SchedulerModuleOptions, providers: unknown[]): Promise<string> {
  const error = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false, ...options })],
    providers: providers as never,
  })
    .compile()
    .then((m) => m.init())
    .then(
      (app) => app.close().then(() => undefined),
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
  return (error as Error).message;
}

describe('SchedulerModule effects', () => {
  it('computes concurrency keys from @Job options at enqueue and applies queueLimits at boot', async () => {
    const store = new MemoryJobStore();
    const app = await (
      await Test.createTestingModule({
        imports: [SchedulerModule.forRoot({ store, autoStart: false, queues: ['default', 'mail'], queueLimits: { mail: 3 } })],
        providers: [TenantSync, RenderReport],
      }).compile()
    ).init();
    try {
      const client = app.get(SchedulerClient);
      const a = await client.enqueue('tenant.sync', { tenant: 'acme' });
      const b = await client.enqueue('report.render', {});
      const c = await client.enqueue('tenant.sync', { tenant: 'acme' }, { concurrencyKey: 'override' });
      expect((await client.get(a.id))?.concurrencyKey).toBe('tenant:acme');
      expect((await client.get(b.id))?.concurrencyKey).toBe('report.render');
      expect((await client.get(c.id))?.concurrencyKey).toBe('override');
      // An overriding key still carries the handler's declared limit.
      expect(await client.listConcurrencyLimits()).toEqual([
        { key: 'override', max: 2 },
        { key: 'report.render', max: 1 },
        { key: 'tenant:acme', max: 2 },
        { queue: 'mail', max: 3 },
      ]);
      await client.setConcurrencyLimit({ key: 'tenant:acme' }, 5);
      expect((await client.listConcurrencyLimits()).find((l) => 'key' in l && l.key === 'tenant:acme')).toEqual({ key: 'tenant:acme', max: 5 });
      expect((await store.auditList({ limit: 10 })).map((r) => [r.actor, r.action, r.target])).toContainEqual(['boot', 'limit.set', 'queue:mail']);
    } finally {
      await app.close();
    }
  });

  it('runs dependants after their parents, quarantines a bad payload, and posts dead letters to an @OnJobTransition observer', async () => {
    const sqlite = tempSqlite();
    const app = await (
      await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({ type: 'better-sqlite3', database: sqlite.database }),
          SchedulerModule.forRoot({ pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000, observerPollIntervalMs: 50, autoStart: false }),
        ],
        providers: [ConfirmOrder, ShipOrder, DeadLetterAlerts],
      }).compile()
    ).init();
    try {
      const client = app.get(SchedulerClient);
      const alerts = app.get(DeadLetterAlerts);
      const confirm = await client.enqueue('order.confirm', { orderId: 'o-1' });
      const ship = await client.enqueue('order.ship', { confirmId: confirm.id }, { dependsOn: [confirm.id] });
      expect((await client.get(ship.id))?.state).toBe('awaiting_parents');
      const orchestrator = app.get(SchedulerOrchestrator);
      const shipDone = settled(app, ship.id);
      await orchestrator.start();
      expect(orchestrator.node.dispatcher).toBeDefined();
      await shipDone;
      expect((await client.get(ship.id))?.state).toBe('succeeded');
      expect(await shipped.promise).toEqual({ confirmed: 'o-1' });

      // Caller-chosen ids let the test listen before the job can possibly settle.
      const bad = { id: randomUUID() };
      const quarantined = settled(app, bad.id);
      await client.enqueue('order.confirm', { orderId: 7 } as never, { id: bad.id });
      expect(await quarantined).toMatchObject({ status: 'applied', state: 'quarantined' });
      expect((await client.get(bad.id))?.lastError).toContain('payload failed validation');

      const doomed = await client.enqueue('order.confirm', { orderId: 'explode' });
      const event = await alerts.arrived.promise;
      expect(event).toMatchObject({ jobId: doomed.id, name: 'order.confirm', state: 'dead_lettered', error: expect.stringContaining('warehouse offline') });
      // The quarantine was not a dead letter, and the observer only hears about order.confirm.
      expect(alerts.events.map((e) => e.jobId)).toEqual([doomed.id]);
      expect((await client.history(doomed.id)).map((h) => h.state)).toEqual(['scheduled', 'running', 'dead_lettered']);
    } finally {
      await app.close();
      sqlite.cleanup();
    }
  });

  it('refuses observers when the history is off, and bad observer declarations, before anything runs', async () => {
    expect(await bootError({ historyPolicy: 'off', store: new MemoryJobStore({ historyPolicy: 'off' }) }, [DeadLetterAlerts])).toBe(
      'DeadLetterAlerts.record observes job transitions, but historyPolicy is "off", so there is nothing to deliver; use "transitions" or "transitions_and_errors".',
    );
    expect(await bootError({}, [EmptyTo])).toBe('@OnJobTransition on EmptyTo.noop needs `to`: a non-empty list of job states.');
    expect(await bootError({}, [TwinA, TwinB])).toBe('Two @OnJobTransition methods share the observer id "twin"; give one of them its own id option.');
    expect(await bootError({}, [RequestScopedObserver])).toMatch(/^@OnJobTransition on RequestScopedObserver.seen is on a request-scoped provider/);
    expect(await bootError({ historyPolicy: 'transitions' }, [])).toBe(
      'historyPolicy is "transitions" but the store passed in records "transitions_and_errors"; set historyPolicy on the store instead.',
    );
    expect(await bootError({ queueLimits: { mail: 0 } }, [])).toMatch(/^queueLimits.mail must be a whole number/);
  });
});
