import type { JobRecord } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { AttemptAbort } from './attempt-abort.js';
import { attemptHookContext, runAttemptHooks, type AttemptHook } from './attempt-hook.js';
import { JobTimeoutError, type AttemptExecutor, type AttemptReport } from './attempt-executor.js';
import type { BatchContext, BatchJob } from './batch-handler.js';
import { AttemptContext } from './job-context.js';
import type { JobDefinition, JobInvoker } from './job-invoker.js';
import type { ProgressBoard } from './progress-board.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import { withTimeout, type Timers } from './timers.js';

export interface BatchExecutorDeps {
  readonly store: JobStore;
  readonly invoker: JobInvoker;
  readonly workerId: string;
  readonly logger: SchedulerLogger;
  readonly timers: Timers;
  readonly hooks: readonly AttemptHook[];
  readonly progress?: ProgressBoard;
  /** Turns each job's end into its report, as for a job run alone. */
  readonly attempts: AttemptExecutor;
}

/** One job of a batch call: its own attempt context, plus the failure the handler gave it. */
class BatchJobContext<TPayload = unknown> extends AttemptContext<TPayload> implements BatchJob<TPayload> {
  failure: { readonly error: unknown } | undefined;

  fail(error: unknown): void {
    this.failure ??= { error };
  }
}

/**
 * The jobs of one batch call, from the start of the call to each job's report. The node aborts
 * its jobs one by one; the call's own signal aborts once all of them are, or on its timeout.
 */
export class BatchRun {
  private readonly batchAbort = new AttemptAbort();

  constructor(
    readonly jobs: readonly JobRecord[],
    readonly aborts: readonly AttemptAbort[],
  ) {}

  /** Called after one of its jobs was aborted: the call stops once no job is left to finish. */
  jobAborted(): void {
    if (this.aborts.every((abort) => abort.reason !== undefined)) this.batchAbort.abort(this.aborts[0]!.reason);
  }

  get signal(): AbortSignal {
    return this.batchAbort.signal;
  }

  abortAll(reason: unknown): void {
    for (const abort of this.aborts) abort.abort(reason);
    this.batchAbort.abort(reason);
  }
}

/**
 * Runs a batch handler's call: each job's payload is validated on its own (a refused one is
 * quarantined and left out), the attempt hooks wrap each job as they would alone, and the handler
 * runs once with the jobs whose hooks reached it. Each job then gets its own report: success,
 * snooze, or failure when the handler failed it or the call threw. Every report is fenced on that
 * job's own lease by the completer.
 */
export class BatchExecutor {
  constructor(private readonly deps: BatchExecutorDeps) {}

  async execute(run: BatchRun, definition: JobDefinition): Promise<AttemptReport[]> {
    const { attempts } = this.deps;
    const reports: (AttemptReport | undefined)[] = run.jobs.map((job) => attempts.rejected(job, definition));
    const contexts = run.jobs.map((job, i) => new BatchJobContext(job, run.aborts[i]!, this.deps.logger, this.deps.store, null, this.deps.progress));
    const running = run.jobs.map((_, i) => i).filter((i) => reports[i] === undefined);
    const ends = await this.call(run, definition, running, contexts);
    await Promise.all(
      running.map(async (i, k) => {
        const end = ends[k]!;
        const job = run.jobs[i]!;
        reports[i] = end.ok ? await attempts.success(job, contexts[i]!, definition) : await attempts.failure(job, contexts[i]!, definition, run.aborts[i]!, end.error);
      }),
    );
    return reports as AttemptReport[];
  }

  /**
   * Runs each job's hooks around one shared call of the handler. The call starts once every job's
   * hooks have either reached it or ended without it (a hook may skip the handler or throw first),
   * with the jobs that reached it, in claim order. Each job's `next()` settles as its part of the
   * call did: rejected with the error the handler gave that job, else with what the call threw.
   */
  private call(run: BatchRun, definition: JobDefinition, running: readonly number[], contexts: readonly BatchJobContext[]): Promise<Array<{ ok: true } | { ok: false; error: unknown }>> {
    const { invoker, hooks, workerId } = this.deps;
    const joined: number[] = [];
    let waiting = running.length;
    let release!: (result: { thrown?: { error: unknown } }) => void;
    const result = new Promise<{ thrown?: { error: unknown } }>((resolve) => (release = resolve));
    const start = () => {
      const jobs = [...joined].sort((a, b) => a - b).map((i) => contexts[i]!);
      if (jobs.length === 0) return release({});
      const context: BatchContext = Object.freeze({ name: run.jobs[0]!.name, size: jobs.length, signal: run.signal, logger: batchLogger(this.deps.logger, run.jobs[0]!.name, jobs.length) });
      const work = invoker.invokeBatch!(jobs, context);
      const timed = definition.timeoutMs === undefined ? work : withTimeout(work, definition.timeoutMs, this.deps.timers, () => {
        const error = new JobTimeoutError(definition.timeoutMs!);
        run.abortAll(error);
        return error;
      });
      timed.then(
        () => release({}),
        (error: unknown) => release({ thrown: { error } }),
      );
    };
    const arrived = () => {
      waiting -= 1;
      if (waiting === 0) start();
    };
    return Promise.all(
      running.map(async (i) => {
        const context = contexts[i]!;
        const job = run.jobs[i]!;
        let reached = false;
        const invoke = async () => {
          reached = true;
          joined.push(i);
          arrived();
          const { thrown } = await result;
          if (context.failure) throw context.failure.error;
          if (thrown) throw thrown.error;
        };
        try {
          await (hooks.length === 0 ? invoke() : runAttemptHooks(hooks, attemptHookContext(job, context, workerId), invoke));
          return { ok: true as const };
        } catch (error) {
          return { ok: false as const, error };
        } finally {
          if (!reached) arrived();
        }
      }),
    );
  }
}

/** The call's logger: its lines name the wire name and how many jobs the call took. */
function batchLogger(logger: SchedulerLogger, name: string, size: number): SchedulerLogger {
  const prefix = `${name} batch of ${size}: `;
  return {
    log: (message) => logger.log(prefix + message),
    warn: (message) => logger.warn(prefix + message),
    error: (message) => logger.error(prefix + message),
    debug: (message) => logger.debug?.(prefix + message),
  };
}
