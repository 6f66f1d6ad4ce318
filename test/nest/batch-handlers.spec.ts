import { afterEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Scope, type INestApplicationContext, type Type } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  declaredScheduleId,
  defineJob,
  Job,
  JOB_CONTEXT,
  SchedulerClient,
  SchedulerModule,
  type BatchContext,
  type BatchJob,
  type BatchJobHandler,
  type JobContext,
  type JobHandler,
} from '../../lib/index.js';
import { MemoryJobStore, SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { refusal } from '../support/refusal.js';

type Doc = { doc: number; broken?: boolean };

/** Each call as the handlers saw it: the wire name, the docs, and the call's request-scoped provider. */
const calls: Array<{ name: string; docs: number[]; serial?: number; sameRequest?: boolean }> = [];

@Job({ name: 'index-doc', batch: { size: 3 }, retry: { baseDelayMs: 1_000, jitter: false } })
class IndexDoc implements BatchJobHandler<Doc> {
  async handle(jobs: readonly BatchJob<Doc>[], context: BatchContext) {
    calls.push({ name: context.name, docs: jobs.map((job) => job.payload.doc) });
    for (const job of jobs) if (job.payload.broken && job.attempt === 1) job.fail(new Error(`doc ${job.payload.doc} is broken`));
  }
}

let serials = 0;

/** New for every call, with the call's BatchContext as its REQUEST. */
@Injectable({ scope: Scope.REQUEST })
class CallScope {
  readonly serial = ++serials;
  constructor(@Inject(REQUEST) readonly call: BatchContext) {}
}

@Job({ name: 'scoped-index', batch: { size: 2 } })
class ScopedIndex implements BatchJobHandler<Doc> {
  constructor(private readonly scope: CallScope) {}
  async handle(jobs: readonly BatchJob<Doc>[], context: BatchContext) {
    calls.push({ name: context.name, docs: jobs.map((job) => job.payload.doc), serial: this.scope.serial, sameRequest: this.scope.call === context });
  }
}

/** A provider that asks for one job's context, which a batch call does not have. */
@Injectable({ scope: Scope.REQUEST })
class OneJobScope {
  constructor(@Inject(JOB_CONTEXT) readonly ctx: JobContext) {}
}

@Job({ name: 'wrong-scope', batch: { size: 2 }, maxAttempts: 1 })
class WrongScope implements BatchJobHandler {
  constructor(readonly scope: OneJobScope) {}
  async handle() {}
}

/** A batch handler may declare a schedule: the jobs it mints are jobs of its name like any other. */
@Job({ name: 'index-sweep', batch: { size: 2 }, schedule: { everyMs: 60_000 } })
class IndexSweep implements BatchJobHandler {
  async handle(jobs: readonly BatchJob[], context: BatchContext) {
    calls.push({ name: context.name, docs: jobs.map(() => 0) });
  }
}

describe('@Job batch handlers in a Nest app on SQLite', () => {
  let app: INestApplicationContext | undefined;

  async function boot(providers: Type[]) {
    calls.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:' }), SchedulerTestingModule.forRoot({ store: 'sqlite' })],
      providers,
    }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('runs 7 jobs in calls of at most 3, each call of one wire name', async () => {
    const { client, tester } = await boot([IndexDoc]);
    const ids = (await client.enqueueMany([1, 2, 3, 4, 5, 6, 7].map((doc) => ({ name: 'index-doc', payload: { doc } })))).map((job) => job.id);
    expect(await tester.drain()).toMatchObject({ attempts: 7, succeeded: 7, advancedMs: 0 });
    expect(calls).toEqual([
      { name: 'index-doc', docs: [1, 2, 3] },
      { name: 'index-doc', docs: [4, 5, 6] },
      { name: 'index-doc', docs: [7] },
    ]);
    for (const id of ids) expect(await client.get(id)).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('retries a job the handler failed alone, while the rest of its call succeeds', async () => {
    const { client, tester } = await boot([IndexDoc]);
    const ids = (await client.enqueueMany([1, 2, 3].map((doc) => ({ name: 'index-doc', payload: { doc, broken: doc === 2 } })))).map((job) => job.id);
    expect(await tester.drain()).toMatchObject({ attempts: 3, succeeded: 2, retried: 1 });
    expect(await client.get(ids[0]!)).toMatchObject({ state: 'succeeded' });
    expect(await client.get(ids[1]!)).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringContaining('doc 2 is broken') });
    expect(await client.get(ids[2]!)).toMatchObject({ state: 'succeeded' });

    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(calls.map((call) => call.docs)).toEqual([[1, 2, 3], [2]]);
    expect(await client.get(ids[1]!)).toMatchObject({ state: 'succeeded', attempt: 2 });
  });

  it('gives each call its own DI scope, whose REQUEST is the call\'s BatchContext', async () => {
    const { client, tester } = await boot([ScopedIndex, CallScope]);
    await client.enqueueMany([1, 2, 3, 4].map((doc) => ({ name: 'scoped-index', payload: { doc } })));
    await tester.drain();
    expect(calls.map(({ docs, sameRequest }) => ({ docs, sameRequest }))).toEqual([
      { docs: [1, 2], sameRequest: true },
      { docs: [3, 4], sameRequest: true },
    ]);
    expect(new Set(calls.map((call) => call.serial)).size).toBe(2);
  });

  it('fails a call whose provider injects JOB_CONTEXT, saying why', async () => {
    const { client, tester } = await boot([WrongScope, OneJobScope]);
    const { id } = await client.enqueue('wrong-scope', {});
    expect(await tester.drain()).toMatchObject({ attempts: 1, deadLettered: 1 });
    expect((await client.get(id))?.lastError).toContain(
      "JOB_CONTEXT is one job's, and a batch handler's call runs many jobs; read each job's context from the jobs its handle(jobs, context) receives, or inject REQUEST for the call's BatchContext.",
    );
  });

  it('runs the jobs a batch handler\'s declared schedule mints', async () => {
    const { client, tester } = await boot([IndexSweep]);
    expect(await client.getSchedule(declaredScheduleId('index-sweep'))).toMatchObject({ name: 'index-sweep', state: 'active' });
    // The tick comes due on the way: advance() claims and runs its job.
    await tester.advance(60_000);
    await tester.drain();
    expect(calls).toEqual([{ name: 'index-sweep', docs: [0] }]);
  });
});

/** A valid handler that declares a schedule: a boot that got as far as writing would write it. */
@Job({ name: 'nightly', schedule: { everyMs: 60_000 } })
class Nightly implements JobHandler {
  async handle() {}
}

/** A batch handler class with these `@Job` options, applied by hand: the compiler refuses some of them. */
function batchHandler(options: object, className: string): Type {
  const cls = { [className]: class implements BatchJobHandler { async handle() {} } }[className]!;
  (Job(options as never) as (target: unknown) => void)(cls);
  return cls;
}

const Definition = defineJob<Doc>({ name: 'index-doc' });

describe('@Job batch options refused at boot', () => {
  it.each<[string, Type, string]>([
    ['size 0', batchHandler({ name: 'index-doc', batch: { size: 0 } }, 'IndexDoc'), "IndexDoc (@Job 'index-doc') batch.size must be a whole number from 1 to 1,000, got 0."],
    ['size 1001', batchHandler({ name: 'index-doc', batch: { size: 1001 } }, 'IndexDoc'), "IndexDoc (@Job 'index-doc') batch.size must be a whole number from 1 to 1,000, got 1001."],
    ['waitMs -1', batchHandler({ name: 'index-doc', batch: { size: 3, waitMs: -1 } }, 'IndexDoc'), "IndexDoc (@Job 'index-doc') batch.waitMs must be a whole number of milliseconds from 0 to 60,000, got -1."],
    ['an unknown key', batchHandler({ name: 'index-doc', batch: { size: 3, wait: 5 } }, 'IndexDoc'), "IndexDoc (@Job 'index-doc') batch has no option \"wait\"; it takes size and waitMs."],
    ['no object', batchHandler({ name: 'index-doc', batch: 3 }, 'IndexDoc'), "IndexDoc (@Job 'index-doc') batch must be an object { size, waitMs? }, got 3."],
    [
      'transaction: true',
      batchHandler({ name: 'index-doc', batch: { size: 3 }, transaction: true }, 'IndexDoc'),
      'the batch handler of "index-doc" cannot set transaction: true: each job\'s outcome is written on its own lease after the call, so no one transaction can hold them; write through your own transaction and make the handler idempotent.',
    ],
    [
      'a wait of half the lease',
      batchHandler({ name: 'index-doc', batch: { size: 3, waitMs: 10_000 } }, 'IndexDoc'),
      'the batch handler of "index-doc" waits up to 10000 ms for its batch, which must be under half the lease (leaseMs 20000); lower batch.waitMs or raise leaseMs.',
    ],
    ['a class without handle', (() => {
      class IndexDoc {}
      (Job({ name: 'index-doc', batch: { size: 3 } }) as (target: unknown) => void)(IndexDoc);
      return IndexDoc;
    })(), "IndexDoc is decorated with @Job('index-doc') but has no handle(jobs, context) method."],
    ['a bad batch beside a definition', (() => {
      class IndexDoc implements BatchJobHandler<Doc> {
        async handle() {}
      }
      (Job(Definition, { batch: { size: 0 } }) as (target: unknown) => void)(IndexDoc);
      return IndexDoc;
    })(), "IndexDoc (@Job 'index-doc') batch.size must be a whole number from 1 to 1,000, got 0."],
  ])('refuses %s with one sentence naming the handler, before anything is written', async (_, handler, message) => {
    const store = new MemoryJobStore();
    const compiled = async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [SchedulerModule.forRoot({ store, leaseMs: 20_000, heartbeatIntervalMs: 5_000 })],
        providers: [Nightly, handler],
      }).compile();
      await (await moduleRef.init()).close();
    };
    expect(await refusal(compiled)).toBe(message);
    expect(await store.scheduleList()).toEqual([]);
  });

  it('boots a valid batch handler, and writes the declared schedule the refused boots did not', async () => {
    const store = new MemoryJobStore();
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store, autoStart: false, leaseMs: 20_000, heartbeatIntervalMs: 5_000 })],
      providers: [Nightly, batchHandler({ name: 'index-doc', batch: { size: 3, waitMs: 9_999 } }, 'IndexDoc')],
    }).compile();
    await (await moduleRef.init()).close();
    expect((await store.scheduleList()).map((schedule) => schedule.name)).toEqual(['nightly']);
  });

  it('leaves batch to the handler: defineJob refuses it', async () => {
    expect(await refusal(() => defineJob({ name: 'index-doc', batch: { size: 3 } } as never))).toBe(
      "defineJob('index-doc') sets batch, which belongs to the handler; pass it as @Job(definition, { batch }).",
    );
  });
});
