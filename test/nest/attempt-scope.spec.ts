import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Scope, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  InjectJobContext,
  Job,
  JOB_CONTEXT,
  SchedulerClient,
  SchedulerModule,
  type JobContext,
  type JobHandler,
} from '../../lib/index.js';
import { MemoryJobStore, SystemClock } from '../../lib/testing/index.js';
import { settled } from './support.js';

let instances = 0;

@Injectable({ scope: Scope.REQUEST })
class AttemptState {
  readonly serial = ++instances;
  constructor(@Inject(JOB_CONTEXT) readonly ctx: JobContext) {}
}

@Injectable()
class SharedCounter {
  calls = 0;
}

const seen: Array<{ serial: number; attempt: number; ctxAttempt: number; handler: object; shared: SharedCounter }> = [];

@Job({ name: 'scoped.flaky', retry: { baseDelayMs: 1, jitter: false } })
class ScopedHandler implements JobHandler {
  constructor(
    private readonly state: AttemptState,
    private readonly shared: SharedCounter,
    @InjectJobContext() private readonly ctx: JobContext,
  ) {}

  async handle() {
    this.shared.calls += 1;
    seen.push({ serial: this.state.serial, attempt: this.ctx.attempt, ctxAttempt: this.state.ctx.attempt, handler: this, shared: this.shared });
    if (this.ctx.attempt < 3) throw new Error(`attempt ${this.ctx.attempt} fails`);
  }
}

describe('a DI scope per attempt', () => {
  let app: INestApplicationContext;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore({ clock: new SystemClock() }), pollIntervalMs: 10, heartbeatIntervalMs: 1_000, leaseMs: 5_000 })],
      providers: [ScopedHandler, AttemptState, SharedCounter],
    }).compile();
    app = await moduleRef.init();
  });
  afterAll(async () => app.close());

  it('resolves the handler and its request-scoped providers anew for every attempt, with that attempt\'s context', async () => {
    const { id } = await app.get(SchedulerClient).enqueue('scoped.flaky', {});
    await settled(app, id, (event) => event.state === 'succeeded');
    expect(seen.map((s) => [s.attempt, s.ctxAttempt])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(new Set(seen.map((s) => s.serial)).size).toBe(3);
    expect(new Set(seen.map((s) => s.handler)).size).toBe(3);
    // Singletons stay singletons.
    expect(new Set(seen.map((s) => s.shared)).size).toBe(1);
    expect(app.get(SharedCounter).calls).toBe(3);
  });

  it('refuses JOB_CONTEXT outside an attempt', async () => {
    await expect(app.resolve(JOB_CONTEXT)).rejects.toThrow('JOB_CONTEXT is only available inside a job attempt; inject it into a @Job handler or a provider it uses.');
  });
});
