import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { checkOptions, InvalidArgumentError, showValue, type JobRecord, type ManualClock } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { SCHEDULER_STORE, SchedulerClient, SchedulerOrchestrator } from '../nest/index.js';
import type { SettledEvent } from '../worker/index.js';
import { allJobs } from './job-listing.js';
import type { ManualTimers } from './manual-timers.js';
import { nextJobAt, nextTickAt } from './next-due.js';
import { NodePump, RunningAttempts } from './node-pump.js';
import { payloadMatches, preview, type PayloadMatcher } from './payload-match.js';
import type { DrainOptions, DrainSummary } from './scheduler-testing.options.js';
import { DrainLimitError, SchedulerExpectationError } from './testing.errors.js';

/** The kit's clock, timers and mode, shared by its module and its tester (internal). */
export const SCHEDULER_TESTING = Symbol('SCHEDULER_TESTING');

/** What {@link SCHEDULER_TESTING} provides. */
export interface SchedulerTestingState {
  readonly clock: ManualClock;
  readonly timers: ManualTimers;
  readonly inline: boolean;
}

/** Payloads an expectation's message shows at most; the rest are counted. */
const SHOWN = 5;

/**
 * Runs the scheduler of a `SchedulerTestingModule` from a test: `drain()` runs the jobs that are
 * due (and, with `advanceTime`, those that come due later), `advance(ms)` moves the clock, and
 * `enqueued` / `expectEnqueued` read what was enqueued. Inject it, or `moduleRef.get(SchedulerTester)`.
 */
@Injectable()
export class SchedulerTester implements OnModuleInit {
  private draining = false;
  /** Attempts in flight on the node, counted from before it starts (see {@link onModuleInit}). */
  private running: RunningAttempts | undefined;

  constructor(
    @Inject(SCHEDULER_TESTING) private readonly state: SchedulerTestingState,
    @Inject(SCHEDULER_STORE) private readonly store: JobStore,
    private readonly orchestrator: SchedulerOrchestrator,
    private readonly client: SchedulerClient,
  ) {}

  onModuleInit(): void {
    // Before the node starts (at application bootstrap), so the count misses no attempt.
    this.running = new RunningAttempts(this.orchestrator.node);
    if (this.state.inline) this.runEnqueuesInline();
    // The node's shutdown waits on its timers (claims and outcome writes in flight, the grace
    // period); on the kit's timers nothing fires them unless the kit does, so it does, from the
    // moment the node stops running until it has stopped.
    const node = this.orchestrator.node;
    const onState = ({ from }: { from: string }) => {
      if (from !== 'running') return;
      node.events.off('stateChanged', onState);
      void this.pump().untilStopped();
    };
    node.events.on('stateChanged', onState);
  }

  /** The clock's current instant. */
  now(): Date {
    return new Date(this.state.clock.now());
  }

  /**
   * Moves the clock forward by `ms`, letting the worker do what it would in that time on the way:
   * its polls claim what comes due, heartbeats renew, sweeps run, schedules mint their ticks. Call
   * `drain()` after it to run everything due.
   */
  async advance(ms: number): Promise<void> {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new InvalidArgumentError(`advance needs a finite, non-negative number of milliseconds, got ${showValue(ms)}.`, 'ms');
    }
    await this.state.timers.advance(ms);
    await this.pump().settle();
    await this.readWaits();
  }

  /**
   * Runs every due job, then the jobs those enqueue or unblock, and delivers their transitions to
   * observers, until nothing is due. With `advanceTime`, it then moves the clock straight to the
   * next job's run time (stopping at each schedule tick on the way) and goes on, until no job
   * waits; a job a year ahead costs what one a second ahead does. Throws a DrainLimitError after
   * `maxJobs` attempts. A batch handler's jobs run in calls of the jobs due together, without
   * waiting out its `batch.waitMs`.
   */
  async drain(options: DrainOptions = {}): Promise<DrainSummary> {
    const { advanceTime = false, maxJobs = 1_000 } = checkDrainOptions(options);
    if (this.orchestrator.node.status !== 'running') {
      throw new InvalidArgumentError(`drain needs the scheduler's worker running, and it is ${this.orchestrator.node.status}; call app.init() (or moduleRef.init()) first, and drain before app.close().`, 'drain');
    }
    if (this.draining) throw new InvalidArgumentError('drain is already running; await the drain in progress instead of starting another.', 'drain');
    this.draining = true;
    const counts = { attempts: 0, succeeded: 0, retried: 0, snoozed: 0, deadLettered: 0, quarantined: 0, cancelled: 0 };
    const events = this.orchestrator.node.events;
    const started = () => (counts.attempts += 1);
    const settled = (event: SettledEvent) => {
      if (event.status !== 'applied') return;
      if (event.state === 'succeeded') counts.succeeded += 1;
      else if (event.state === 'scheduled' && event.kind === 'snoozed') counts.snoozed += 1;
      else if (event.state === 'scheduled') counts.retried += 1;
      else if (event.state === 'dead_lettered') counts.deadLettered += 1;
      else if (event.state === 'quarantined') counts.quarantined += 1;
      else if (event.state === 'cancelled') counts.cancelled += 1;
    };
    events.on('attemptStarted', started);
    events.on('settled', settled);
    const from = this.state.clock.now();
    try {
      const pump = this.pump(() => counts.attempts > maxJobs);
      for (;;) {
        const before = counts.attempts;
        await pump.pass();
        if (counts.attempts > maxJobs) {
          throw new DrainLimitError(
            `drain started ${counts.attempts} attempts, more than maxJobs (${maxJobs}): a job may be enqueueing itself again, or snoozing, on every run; raise maxJobs if this much work is expected.`,
            counts.attempts,
          );
        }
        if (counts.attempts > before) continue;
        // Batches waiting to fill (`batch.waitMs`) would otherwise wait out the drain: start them.
        if (await this.flushBatches(pump, counts)) continue;
        const now = this.state.clock.now();
        const next = advanceTime ? await nextJobAt(this.store, now) : null;
        if (next === null) break;
        // Straight to the next instant something happens: the time between costs nothing.
        const tick = await nextTickAt(this.store, now);
        await this.state.timers.jumpTo(tick !== null && tick < next ? tick : next);
      }
      await this.readWaits();
      const waiting = (await allJobs(this.store, { state: 'scheduled' })).length + (await allJobs(this.store, { state: 'awaiting_parents' })).length;
      return { ...counts, advancedMs: this.state.clock.now() - from, waiting };
    } finally {
      events.off('attemptStarted', started);
      events.off('settled', settled);
      this.draining = false;
    }
  }

  /** Starts every batch the node holds, full or not, and runs what follows; true when an attempt started. */
  private async flushBatches(pump: NodePump, counts: { attempts: number }): Promise<boolean> {
    const before = counts.attempts;
    this.orchestrator.node.flushBatches();
    await pump.pass();
    return counts.attempts > before;
  }

  /**
   * Every job of this wire name the store holds, in the order they were enqueued, whatever their
   * state: a job that already ran is still listed (its `state` says so).
   */
  enqueued(name: string): Promise<JobRecord[]> {
    return allJobs(this.store, { name });
  }

  /**
   * Resolves with the first job of this name whose payload matches (see {@link PayloadMatcher}:
   * a value, a predicate, or jest's asymmetric matchers), or any job of the name without a
   * matcher. Otherwise throws a SchedulerExpectationError listing what was enqueued.
   */
  async expectEnqueued(name: string, payload?: PayloadMatcher): Promise<JobRecord> {
    const jobs = await this.enqueued(name);
    const found = payload === undefined ? jobs[0] : jobs.find((job) => payloadMatches(job.payload, payload));
    if (found) return found;
    const wanted = payload === undefined ? `a "${name}" job` : `a "${name}" job with a payload matching ${preview(payload)}`;
    if (jobs.length > 0) {
      const shown = jobs.slice(0, SHOWN).map((job) => preview(job.payload)).join(', ');
      const more = jobs.length > SHOWN ? `, and ${jobs.length - SHOWN} more` : '';
      throw new SchedulerExpectationError(`Expected ${wanted} to be enqueued; the ${jobs.length} "${name}" job(s) enqueued have the payloads ${shown}${more}.`);
    }
    const byName = new Map<string, number>();
    for (const job of await allJobs(this.store)) byName.set(job.name, (byName.get(job.name) ?? 0) + 1);
    const others = [...byName].slice(0, SHOWN).map(([other, count]) => `"${other}" (${count})`).join(', ');
    const rest = byName.size > SHOWN ? `, and ${byName.size - SHOWN} more names` : '';
    throw new SchedulerExpectationError(`Expected ${wanted} to be enqueued, and there is none; ${byName.size === 0 ? 'nothing was enqueued at all' : `enqueued were ${others}${rest}`}.`);
  }

  /**
   * Reads every pending `waitFor` once, so a wait settles by the time `drain` or `advance`
   * resolves: a job the worker finished hints its waits anyway, but one the test cancelled does
   * not, and the waiter's own next poll waits for the kit's clock.
   */
  private async readWaits(): Promise<void> {
    const { waiter } = this.orchestrator;
    if (waiter.pending > 0) await waiter.pollOnce();
  }

  private pump(halted?: () => boolean): NodePump {
    this.running ??= new RunningAttempts(this.orchestrator.node);
    return new NodePump(this.orchestrator.node, this.state.timers, this.running, halted);
  }

  /**
   * Inline mode: `enqueue`, `enqueueMany` and `enqueueBatch` resolve once the jobs they enqueued, and what those
   * lead to, have run. The module's own client is wrapped, so every service that injects it gets
   * the behaviour. An enqueue inside the host's transaction (`manager`) is not run there, as the
   * job does not exist before that transaction commits: it runs at the next drain.
   *
   * A batch handler's jobs run at once as well, since `drain` starts batches without waiting out
   * `batch.waitMs`: one `enqueue`'s job runs as a call of one job, and the jobs of one
   * `enqueueMany` or `enqueueBatch` in calls of up to `batch.size` (with any other job of the name
   * already held), as a worker that found them due together would run them.
   */
  private runEnqueuesInline(): void {
    const client = this.client as unknown as Record<'enqueue' | 'enqueueMany' | 'enqueueBatch', (...args: unknown[]) => Promise<unknown>>;
    for (const method of ['enqueue', 'enqueueMany', 'enqueueBatch'] as const) {
      const original = client[method].bind(this.client);
      const optionsAt = method === 'enqueue' ? 2 : 1;
      client[method] = async (...args: unknown[]) => {
        const result = await original(...args);
        const manager = (args[optionsAt] as { manager?: unknown } | undefined)?.manager;
        // Inside a drain (a handler enqueueing), the drain in progress runs the new jobs.
        if (manager === undefined && !this.draining && this.orchestrator.node.status === 'running') await this.drain();
        return result;
      };
    }
  }
}

function checkDrainOptions(options: DrainOptions): DrainOptions {
  // `{ advance: true }` would otherwise run only what is due now, and the test would wonder why.
  checkOptions(options, ['advanceTime', 'maxJobs'], { what: 'drain', argument: 'drain options' });
  if (options.advanceTime !== undefined && typeof options.advanceTime !== 'boolean') {
    throw new InvalidArgumentError(`advanceTime must be true or false, got ${showValue(options.advanceTime)}.`, 'advanceTime');
  }
  if (options.maxJobs !== undefined && (!Number.isInteger(options.maxJobs) || options.maxJobs < 1)) {
    throw new InvalidArgumentError(`maxJobs must be a whole number of at least 1, got ${showValue(options.maxJobs)}.`, 'maxJobs');
  }
  return options;
}
