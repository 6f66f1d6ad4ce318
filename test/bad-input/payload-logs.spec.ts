import { describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, SchedulerClient, SchedulerModule } from '../../lib/index.js';
import { SystemClock } from '../../lib/testing/index.js';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import { ERROR_LOG_MESSAGE_LENGTH, FunctionInvoker, PermanentJobError, WorkerNode, type ErrorLogDetail, type SchedulerLogger } from '../../lib/worker/index.js';
import { RAW_CONTROL } from './hostile.js';
import { settled } from '../nest/support.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/** A string that appears in payloads (and outputs) and nowhere else. */
const MARKER = 'MARKER-7f3c9e1a-payload-secret';

/** Keeps every line at every level. */
function capturingLogger() {
  const lines: string[] = [];
  const logger: SchedulerLogger = {
    log: (m) => void lines.push(`log ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m) => void lines.push(`error ${m}`),
    debug: (m) => void lines.push(`debug ${m}`),
  };
  return { logger, lines };
}

describe('payload contents never reach the log by default', () => {
  it('through success, retries, dead-lettering, quarantine, oversized output, a stale outcome and observers', async () => {
    const timers = new ManualTimers();
    const memory = new MemoryJobStore({ clock: timers.clock });
    const { logger, lines } = capturingLogger();
    let cutOff = false;
    let flakyCalls = 0;
    let releaseSlow!: () => void;
    const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));

    // Heartbeats that claim every lease was renewed while writing nothing: the node keeps running
    // an attempt whose lease lapsed, so its outcome reaches the store stale.
    const store = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop === 'jobHeartbeat' && cutOff) {
          return async (params: Parameters<JobStore['jobHeartbeat']>[0]) => ({
            renewed: params.leases.map((lease) => ({ ...lease, leasedUntil: new Date(timers.clock.now() + params.leaseMs), cancelRequested: false })),
            lost: [],
          });
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });

    const node = new WorkerNode({
      store,
      logger,
      clock: timers.clock,
      timers,
      random: new SeededRandom(7n),
      options: { concurrency: 8, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1', maintenanceIntervalMs: 5_000 },
      observers: [
        { id: 'audit', to: ['succeeded', 'dead_lettered', 'quarantined'], deliver: () => void 0 },
        {
          id: 'flaky-observer',
          to: ['dead_lettered'],
          deliver: () => {
            throw new Error('observer could not post');
          },
        },
      ],
      invoker: new FunctionInvoker({
        'job.ok': { handle: (_p, ctx) => ctx.setOutput({ echoed: MARKER }) },
        'job.flaky': {
          retry: { baseDelayMs: 1_000, maxDelayMs: 1_000, jitter: false },
          handle: () => {
            flakyCalls += 1;
            if (flakyCalls === 1) throw new Error('upstream timed out');
          },
        },
        'job.doomed': {
          handle: () => {
            throw new Error('card declined');
          },
        },
        'job.permanent': {
          handle: () => {
            throw new PermanentJobError('account closed');
          },
        },
        'job.validated': {
          // A validator whose reason quotes the payload: the reason goes to lastError only.
          validate: (payload) => {
            throw new Error(`bad payload ${JSON.stringify(payload)}`);
          },
          handle: () => undefined,
        },
        'job.huge-output': { handle: (_p, ctx) => ctx.setOutput({ blob: MARKER.repeat(5_000) }) },
        'job.slow': { handle: () => slowReleased },
      }),
    });

    const payload = (n: number) => ({ n, secret: MARKER, nested: { list: [MARKER] } });
    const ids = {
      ok: (await memory.jobEnqueue({ job: { name: 'job.ok', payload: payload(1) } })).id,
      flaky: (await memory.jobEnqueue({ job: { name: 'job.flaky', payload: payload(2), maxAttempts: 3 } })).id,
      doomed: (await memory.jobEnqueue({ job: { name: 'job.doomed', payload: payload(3), maxAttempts: 1 } })).id,
      permanent: (await memory.jobEnqueue({ job: { name: 'job.permanent', payload: payload(4) } })).id,
      validated: (await memory.jobEnqueue({ job: { name: 'job.validated', payload: payload(5) } })).id,
      unhandled: (await memory.jobEnqueue({ job: { name: 'job.nobody', payload: payload(6) } })).id,
      huge: (await memory.jobEnqueue({ job: { name: 'job.huge-output', payload: payload(7), maxAttempts: 1 } })).id,
      slow: (await memory.jobEnqueue({ job: { name: 'job.slow', payload: payload(8), maxAttempts: 1 } })).id,
    };
    await memory.scheduleUpsert({ schedule: { name: 'job.ok', everyMs: 60_000, payload: payload(9) } });

    await node.start();
    await settle();
    cutOff = true;
    await timers.advance(2_000); // the flaky job's retry
    // The slow attempt's lease lapses while its heartbeats pretend otherwise, and the sweep
    // dead-letters it; the success the node then reports finds the lease gone.
    await timers.advance(36_000);
    expect(await memory.jobGet({ jobId: ids.slow })).toMatchObject({ state: 'dead_lettered', lastError: 'lease expired' });
    releaseSlow();
    await settle();
    await timers.advance(60_000); // a schedule tick, observer passes and their retries, maintenance
    await node.stop();

    // Every path ran as intended...
    const state = async (id: string) => (await memory.jobGet({ jobId: id }))!.state;
    expect(await state(ids.ok)).toBe('succeeded');
    expect(await state(ids.flaky)).toBe('succeeded');
    expect(await state(ids.doomed)).toBe('dead_lettered');
    expect(await state(ids.permanent)).toBe('dead_lettered');
    expect(await state(ids.validated)).toBe('quarantined');
    expect(await state(ids.unhandled)).toBe('quarantined');
    expect(await state(ids.huge)).toBe('dead_lettered');
    expect(node.stats).toMatchObject({ staleOutcomes: 1 });
    expect(flakyCalls).toBe(2);
    expect((await memory.jobGet({ jobId: ids.validated }))!.lastError).toContain(MARKER); // kept for the operator, not logged
    expect((await memory.jobGet({ jobId: ids.ok }))!.output).toEqual({ echoed: MARKER });
    expect((await memory.jobList({ name: 'job.ok' })).length).toBeGreaterThanOrEqual(2); // the schedule minted
    // ...and logged about it,
    const text = lines.join('\n');
    for (const expected of [/QUARANTINED job\.validated/, /QUARANTINED job\.nobody/, /failed permanently/, /retrying in/, /no attempts left/, /PayloadTooLargeError/, /stale outcome/, /observer flaky-observer failed/]) {
      expect(text).toMatch(expected);
    }
    // ...without the payload, the output or the validator's reason in any line.
    expect(lines.filter((line) => line.includes(MARKER) || line.includes('MARKER'))).toEqual([]);
  });
});

const job = (options: object) => Job(options as never) as unknown as ClassDecorator;

@job({ name: 'nest.ok' })
class NestOkJob {
  handle() {}
}

@job({ name: 'nest.doomed', maxAttempts: 1 })
class NestDoomedJob {
  handle() {
    throw new Error('card declined');
  }
}

@job({
  name: 'nest.validated',
  validate: (payload: unknown) => {
    throw new Error(`bad payload ${JSON.stringify(payload)}`);
  },
})
class NestValidatedJob {
  handle() {}
}

@job({
  name: 'nest.keyed',
  concurrencyKey: (payload: unknown) => {
    throw new Error(`no tenant in ${JSON.stringify(payload)}`);
  },
})
class NestKeyedJob {
  handle() {}
}

describe('payload contents never reach the Nest application log by default', () => {
  it('through the module: boot, success, dead-letter, quarantine, a refused enqueue and shutdown', async () => {
    const lines: string[] = [];
    const capture = (level: string) => (message: unknown, ...rest: unknown[]) => void lines.push(`${level} ${String(message)} ${rest.map(String).join(' ')}`);
    const logger: LoggerService = { log: capture('log'), warn: capture('warn'), error: capture('error'), debug: capture('debug'), verbose: capture('verbose'), fatal: capture('fatal') };
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore({ clock: new SystemClock() }), pollIntervalMs: 10, heartbeatIntervalMs: 1_000, leaseMs: 5_000 })],
      providers: [NestOkJob, NestDoomedJob, NestValidatedJob, NestKeyedJob],
    })
      .setLogger(logger)
      .compile();
    const app = await moduleRef.init();
    try {
      const client = app.get(SchedulerClient) as unknown as { enqueue(name: string, payload: unknown): Promise<{ id: string }> };
      const payload = { secret: MARKER };
      const outcomes = await Promise.all(
        ['nest.ok', 'nest.doomed', 'nest.validated'].map(async (name) => {
          const { id } = await client.enqueue(name, payload);
          return (await settled(app, id)).state;
        }),
      );
      expect(outcomes).toEqual(['succeeded', 'dead_lettered', 'quarantined']);
      const refused = await client.enqueue('nest.keyed', payload).catch((error: Error) => error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).not.toContain(MARKER);
    } finally {
      await app.close();
    }
    expect(lines.join('\n')).toMatch(/QUARANTINED nest\.validated/);
    expect(lines.join('\n')).toMatch(/nest\.doomed .* no attempts left/);
    expect(lines.filter((line) => line.includes('MARKER'))).toEqual([]);
  });
});

describe('issue 19 item 8: a handler\'s error reaches the log as one bounded, escaped line', () => {
  // The message opens with a forged log line and terminal escapes, and quotes the payload (and so
  // its secret) past the 200 characters a default log line keeps of it.
  const hostileMessage = (payload: unknown) =>
    `upstream refused\n[ERROR] forged: all jobs lost\r\u001b[2K\u001b]8;;https://evil.example/\u0007 ${'.'.repeat(220)} payload=${JSON.stringify(payload)}`;

  async function run(errorLogDetail?: ErrorLogDetail) {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const calls: string[] = [];
    const logger: SchedulerLogger = { log: (m) => void calls.push(m), warn: (m) => void calls.push(m), error: (m) => void calls.push(m), debug: (m) => void calls.push(m) };
    const node = new WorkerNode({
      store,
      logger,
      clock: timers.clock,
      timers,
      random: new SeededRandom(11n),
      options: { concurrency: 4, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1', observerPollIntervalMs: 500, ...(errorLogDetail && { errorLogDetail }) },
      observers: [
        {
          id: 'webhook',
          to: ['dead_lettered'],
          deliver: (event) => {
            throw new Error(hostileMessage({ echoed: event.jobId, secret: MARKER }));
          },
        },
      ],
      invoker: new FunctionInvoker({
        'job.hostile': {
          retry: { baseDelayMs: 1_000, maxDelayMs: 1_000, jitter: false },
          handle: (payload) => {
            throw new Error(hostileMessage(payload));
          },
        },
        'job.hostile-permanent': {
          handle: (payload) => {
            throw new PermanentJobError(hostileMessage(payload));
          },
        },
      }),
    });
    await node.start();
    const retried = (await store.jobEnqueue({ job: { name: 'job.hostile', payload: { secret: MARKER }, maxAttempts: 2 } })).id;
    const permanent = (await store.jobEnqueue({ job: { name: 'job.hostile-permanent', payload: { secret: MARKER } } })).id;
    await timers.advance(5_000);
    await node.stop();
    expect((await store.jobGet({ jobId: retried }))!.state).toBe('dead_lettered');
    expect((await store.jobGet({ jobId: permanent }))!.state).toBe('dead_lettered');
    // The operator still gets the whole text.
    expect((await store.jobGet({ jobId: retried }))!.lastError).toContain(MARKER);
    const failures = calls.filter((m) => /attempt \d+ of 2 failed|failed permanently|observer webhook failed/.test(m));
    expect(failures.filter((m) => /attempt 1 of 2 failed/.test(m))).toHaveLength(1);
    expect(failures.filter((m) => /no attempts left/.test(m))).toHaveLength(1);
    expect(failures.filter((m) => /failed permanently/.test(m))).toHaveLength(1);
    expect(failures.filter((m) => /observer webhook failed/.test(m)).length).toBeGreaterThanOrEqual(1);
    for (const message of calls) {
      // One line each, nothing a terminal acts on: the forged line never stands on its own.
      expect(message).not.toMatch(/[\n\r]/);
      expect(message).not.toMatch(RAW_CONTROL);
    }
    return failures;
  }

  it('by default: the class and 200 escaped characters of the message, never the secret quoted past them', async () => {
    const failures = await run();
    for (const line of failures) {
      expect(line).toContain('Error: upstream refused\\n[ERROR] forged: all jobs lost\\r\\x1b[2K\\x1b]8;;https://evil.example/\\x07');
      expect(line).not.toContain(MARKER);
      const [, message] = /Error: (upstream refused.*?…)/.exec(line)!;
      expect([...message!].length).toBeLessThanOrEqual(ERROR_LOG_MESSAGE_LENGTH);
    }
  });

  it('with errorLogDetail "class": the class alone, no text of the handler\'s at all', async () => {
    for (const line of await run('class')) {
      expect(line).toMatch(/\((PermanentJobError|Error)\)|: (PermanentJobError|Error)(;|$)/);
      expect(line).not.toContain('upstream refused');
    }
  });

  it('with errorLogDetail "stack": the whole message and stack, still one escaped line', async () => {
    for (const line of await run('stack')) {
      expect(line).toContain(MARKER);
      expect(line).toMatch(/\\n {4}at /);
    }
  });

  it('refuses an unknown errorLogDetail before the node exists', () => {
    expect(() => new WorkerNode({ store: new MemoryJobStore(), invoker: new FunctionInvoker({}), options: { errorLogDetail: 'all' as never } })).toThrow(
      /^errorLogDetail must be "class", "message" or "stack", got "all"\.$/,
    );
  });
});
