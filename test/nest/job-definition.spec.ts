import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  defineJob,
  InvalidArgumentError,
  Job,
  OnJobTransition,
  SchedulerClient,
  SchedulerModule,
  type JobHandler,
  type SchedulerModuleOptions,
} from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

const Thumbnail = defineJob<{ url: string }>({ name: 'images.thumbnail', queue: 'images', maxAttempts: 4 });

@Job({ name: 'images.thumbnail', queue: 'other' })
class DriftedThumbnail implements JobHandler<{ url: string }> {
  async handle() {}
}

@Job(Thumbnail, { timeoutMs: 5_000 })
class ThumbnailJob implements JobHandler<{ url: string }> {
  async handle() {}
}

@Injectable()
class Alerts {
  @OnJobTransition({ to: ['dead_lettered'] })
  notify() {}
}

async function boot(options: SchedulerModuleOptions, providers: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), ...options })],
    providers: providers as never,
  }).compile();
  return moduleRef.init();
}

/** The one-sentence InvalidArgumentError a call throws. */
function refusal(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^[^\n]+\.$/);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

async function bootRefusal(options: SchedulerModuleOptions, providers: unknown[] = []): Promise<string> {
  const error = await boot(options, providers).then(
    async (app) => void (await app.close()),
    (e: unknown) => e,
  );
  return refusal(() => {
    if (error) throw error;
  });
}

describe('issue 19 item 14: job definitions', () => {
  it('issue 19 item 14: defineJob keeps only what it was given, frozen', () => {
    const definition = defineJob<{ url: string }>({ name: 'images.resize', queue: 'images', retry: { baseDelayMs: 10 } });
    expect({ ...definition }).toEqual({ name: 'images.resize', queue: 'images', retry: { baseDelayMs: 10 } });
    expect(Object.isFrozen(definition)).toBe(true);
    expect(Object.isFrozen(definition.retry)).toBe(true);
  });

  it('issue 19 item 14: defineJob refuses bad options with one sentence', () => {
    expect(refusal(() => defineJob(null as never))).toBe('defineJob needs an object with at least a name, got null.');
    expect(refusal(() => defineJob({ name: '' }))).toMatch(/^defineJob name must be 1 to 128 characters/);
    expect(refusal(() => defineJob({ name: 'a', queue: 'no spaces' }))).toMatch(/^defineJob\('a'\) queue must be 1 to 64 characters/);
    expect(refusal(() => defineJob({ name: 'a', maxAttempts: 0 }))).toBe("defineJob('a') maxAttempts must be a whole number from 1 to 10000, got 0.");
    expect(refusal(() => defineJob({ name: 'a', retry: { baseDelayMs: -1 } }))).toMatch(/^defineJob\('a'\) retry.baseDelayMs must be/);
    expect(refusal(() => defineJob({ name: 'a', concurrencyLimit: 0 }))).toMatch(/^defineJob\('a'\) concurrencyLimit must be a whole number/);
    expect(refusal(() => defineJob({ name: 'a', concurrencyKey: 'tenant' as never }))).toBe("defineJob('a') sets concurrencyKey to something other than a function of the payload.");
    expect(refusal(() => defineJob({ name: 'a', timeoutMs: 5 } as never))).toBe("defineJob('a') sets timeoutMs, which belongs to the handler; pass it as @Job(definition, { timeoutMs }).");
    expect(refusal(() => defineJob({ name: 'a', qeueu: 'x' } as never))).toMatch(/^defineJob\('a'\) sets qeueu, which is not a job definition option; known options are name, queue,/);
  });

  it('issue 19 item 14: @Job(definition, options) refuses to change what producers share', () => {
    class Requeued {
      async handle() {}
    }
    expect(refusal(() => (Job(Thumbnail, { queue: 'other' } as never) as (target: unknown) => void)(Requeued))).toBe(
      "Requeued (@Job 'images.thumbnail') sets queue beside its definition; set it in defineJob, so producers use it too.",
    );
  });

  it('issue 19 item 14: a handler by the definition takes its queue and attempts for by-name enqueues', async () => {
    const app = await boot({ autoStart: false, queues: ['images'] }, [ThumbnailJob]);
    try {
      const client = app.get(SchedulerClient);
      const { id } = await client.enqueue('images.thumbnail', { url: 'a.png' });
      expect(await client.get(id)).toMatchObject({ queue: 'images', maxAttempts: 4 });
    } finally {
      await app.close();
    }
  });

  it('issue 19 item 14: the boot refuses bad producer options', async () => {
    expect(await bootRefusal({ worker: 'no' as never })).toBe('worker must be true or false, got "no".');
    expect(await bootRefusal({ worker: false, autoStart: true })).toBe(
      'autoStart is true but worker is false, so there is no worker to start; leave autoStart unset on a producer-only node.',
    );
    expect(await bootRefusal({ jobs: [{ name: 'images.thumbnail' }] as never })).toBe('jobs[0] is not a definition made by defineJob.');
    const twin = defineJob({ name: 'images.thumbnail' });
    expect(await bootRefusal({ jobs: [Thumbnail, twin] })).toBe('jobs lists two different definitions named "images.thumbnail"; each wire name needs exactly one.');
    expect(await bootRefusal({ jobs: [Thumbnail], queues: ['other'] }, [DriftedThumbnail])).toBe(
      'The job definition "images.thumbnail" in jobs and its handler DriftedThumbnail disagree on queue; declare the handler with @Job(definition) so they share it.',
    );
    expect(await bootRefusal({ worker: false }, [Alerts])).toBe(
      'Alerts.notify observes job transitions, but worker is false, so this node delivers none; register observers on a worker node.',
    );
  });

  it('issue 19 item 14: a definition listed beside its own handler boots', async () => {
    const app = await boot({ autoStart: false, queues: ['images'], jobs: [Thumbnail] }, [ThumbnailJob]);
    await app.close();
  });

  it('issue 19 item 14: enqueue refuses a job named twice, or by something that is not a definition', async () => {
    const app = await boot({ worker: false });
    try {
      const client = app.get(SchedulerClient);
      await expect(client.enqueueMany([{ job: Thumbnail, name: 'images.thumbnail', payload: { url: 'x' } } as never])).rejects.toThrow(
        'jobs[0].name and job are both set; name the job by one of them.',
      );
      await expect(client.enqueueMany([{ job: { name: 'images.thumbnail' }, payload: { url: 'x' } } as never])).rejects.toThrow(
        'job must be a definition made by defineJob, got [object Object].',
      );
      expect(await client.list()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
