import { assertPositiveInteger, InvalidArgumentError, showValue } from '../core/index.js';
import type { OperatorStore, MaintenanceStore } from '../store/index.js';
import { describeError, realTimers, type SchedulerLogger, type Timers } from '../worker/index.js';
import { verifyHistory } from './verify-history.js';
import { readVerifyRuns, recordVerifyRun } from './verify-runs.js';

/** The module's `verify` option: how often one node of the cluster verifies, and over what window. */
export interface ScheduledVerifyOptions {
  /** How long after the last recorded run the next one is due. Default a day; at least a minute, at most 30 days. */
  readonly everyMs?: number;
  /** The range each run judges: the entries of the last `windowMs`. Default `everyMs`, so the runs meet end to end; at most 90 days. */
  readonly windowMs?: number;
}

/** The maintenance lease the verifying node holds: one node of the cluster verifies at a time. */
export const VERIFY_TASK = 'verify';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How often a node asks for the lease and looks whether a run is due: a run is at most this late. */
const LOOK_EVERY_MS = 5 * MINUTE;

/** Checks the option, in one sentence, before the app boots. */
export function checkScheduledVerifyOptions(value: unknown): Required<ScheduledVerifyOptions> | null {
  if (value === undefined || value === false) return null;
  if (value === true) return { everyMs: DAY, windowMs: DAY };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`verify must be true, false or { everyMs?, windowMs? }, got ${showValue(value)}.`, 'verify');
  }
  const options = value as Record<string, unknown>;
  const unknown = Object.keys(options).filter((key) => key !== 'everyMs' && key !== 'windowMs');
  if (unknown.length > 0) throw new InvalidArgumentError(`verify takes everyMs and windowMs, not ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`, 'verify');
  const atLeastAMinute = (name: string, v: unknown, max: number) => {
    const ms = assertPositiveInteger(v, `verify.${name}`, max);
    if (ms < MINUTE) throw new InvalidArgumentError(`verify.${name} must be at least 60000 (a minute), got ${ms}.`, `verify.${name}`);
    return ms;
  };
  const everyMs = options.everyMs === undefined ? DAY : atLeastAMinute('everyMs', options.everyMs, 30 * DAY);
  return { everyMs, windowMs: options.windowMs === undefined ? everyMs : atLeastAMinute('windowMs', options.windowMs, 90 * DAY) };
}

type VerifyStore = Parameters<typeof verifyHistory>[0] & Pick<OperatorStore, 'auditAppend'> & Pick<MaintenanceStore, 'maintenanceLease'>;

/** Each run starts this much before the last scheduled one did, so clocks that differ leave no entry unjudged. */
const OVERLAP_MS = LOOK_EVERY_MS;
/** Recorded runs read to find the last scheduled one among the CLI's. */
const RUNS_READ = 50;

/**
 * The opt-in scheduled verify: every few minutes a node asks for the `verify` maintenance lease,
 * and the holder looks for the last run it or another node recorded with actor `scheduled`. When
 * that run started `everyMs` ago (or there is none), it verifies the entries since that run
 * started (the last `windowMs` the first time), renewing the lease while it reads, and records the
 * report. Runs the CLI records do not move the pace. A broken promise is logged as an error; the
 * dashboard's Guarantees page shows every run.
 */
export class ScheduledVerify {
  private timer: unknown;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private started = false;

  constructor(
    private readonly store: VerifyStore,
    private readonly options: Required<ScheduledVerifyOptions> & {
      readonly workerId: string;
      readonly logger: SchedulerLogger;
      readonly now: () => number;
      readonly timers?: Timers;
    },
  ) {}

  private get timers(): Timers {
    return this.options.timers ?? realTimers;
  }

  private get leaseMs(): number {
    return 3 * Math.min(LOOK_EVERY_MS, this.options.everyMs);
  }

  /** Looks now, then every few minutes, until stopped; a second start does nothing. */
  start(): void {
    if (this.started || this.stopping.signal.aborted) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stops looking, and ends a run under way before its next read; it records nothing. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('the node stopped'));
    this.timers.clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One look: takes or keeps the lease, and verifies when a run is due. Resolves to what it did.
   * Exposed for tests, which drive it on a manual clock.
   */
  async look(): Promise<'not_holder' | 'not_due' | 'verified'> {
    const { store, options } = this;
    if (!(await store.maintenanceLease({ task: VERIFY_TASK, workerId: options.workerId, leaseMs: this.leaseMs }))) return 'not_holder';
    const last = (await readVerifyRuns(store, RUNS_READ)).find((run) => run.actor === SCHEDULED_ACTOR);
    const now = options.now();
    if (last !== undefined && now - last.startedAt.getTime() < options.everyMs) return 'not_due';
    const since = last === undefined ? now - options.windowMs : last.startedAt.getTime() - OVERLAP_MS;
    const run = new AbortController();
    const onStop = () => run.abort(this.stopping.signal.reason);
    this.stopping.signal.addEventListener('abort', onStop, { once: true });
    const renewing = this.renewWhile(run);
    try {
      const report = await verifyHistory(store, { since: new Date(since), signal: run.signal });
      // A node that stopped, or lost the lease, while the last read was under way writes nothing more.
      run.signal.throwIfAborted();
      await recordVerifyRun(store, report, { actor: SCHEDULED_ACTOR, startedAt: new Date(now) });
      this.report(report.violationCount, report.checked.entries, report.checked.jobs);
      return 'verified';
    } finally {
      this.stopping.signal.removeEventListener('abort', onStop);
      run.abort(new Error('the run ended'));
      await renewing;
    }
  }

  /** Renews the lease while a run reads, so a long one keeps it; a lost lease ends the run. */
  private async renewWhile(run: AbortController): Promise<void> {
    const every = Math.min(LOOK_EVERY_MS, this.options.everyMs);
    while (!run.signal.aborted) {
      const waited = await new Promise<boolean>((resolve) => {
        const timer = this.timers.setTimeout(() => resolve(true), every);
        run.signal.addEventListener('abort', () => (this.timers.clearTimeout(timer), resolve(false)), { once: true });
      });
      if (!waited) return;
      const held = await this.store.maintenanceLease({ task: VERIFY_TASK, workerId: this.options.workerId, leaseMs: this.leaseMs }).catch(() => false);
      if (!held) run.abort(new Error('another node took the verify lease'));
    }
  }

  private report(violations: number, entries: number, jobs: number): void {
    if (violations > 0) {
      this.options.logger.error(
        `the scheduled verify found ${violations} broken ${violations === 1 ? 'promise' : 'promises'} in ${entries} history entries of ${jobs} jobs; the dashboard's Guarantees page and \`durable-scheduler verify\` name them.`,
      );
    } else {
      this.options.logger.log(`the scheduled verify checked ${entries} history entries of ${jobs} jobs: no promise was broken.`);
    }
  }

  private schedule(ms: number): void {
    if (this.stopping.signal.aborted) return;
    this.timer = this.timers.setTimeout(() => {
      if (this.stopping.signal.aborted) return;
      this.running = this.look()
        .then(
          () => undefined,
          (error: unknown) => {
            const minutes = Math.round(Math.min(LOOK_EVERY_MS, this.options.everyMs) / MINUTE);
            if (!this.stopping.signal.aborted) this.options.logger.warn(`the scheduled verify failed (${describeError(error)}); it looks again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`);
          },
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(Math.min(LOOK_EVERY_MS, this.options.everyMs));
        });
    }, ms);
  }
}

/** The actor a scheduled run is recorded under; its runs set the pace. */
export const SCHEDULED_ACTOR = 'scheduled';
