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
import type { Timers } from './timers.js';

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

  /** The jobs the call took (by index), once it starts: a job left out of it has nothing to stop. */
  private members: readonly number[] | undefined;

  joined(members: readonly number[]): void {
    this.members = members;
    this.jobAborted();
  }

  /** Called after one of its jobs was aborted: the call stops once none of its jobs is left to finish. */
  jobAborted(): void {
    const members = this.members;
    if (members === undefined || members.length === 0) return;
    if (members.every((i) => this.aborts[i]!.reason !== undefined)) this.batchAbort.abort(this.aborts[members[0]!]!.reason);
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
   * `timeoutMs` bounds the whole of it, hooks included, as it bounds one job's attempt: a hook that
   * waits on another job's hook (a lock of one) cannot hold the call's slot for good.
   */
  private async call(run: BatchRun, definition: JobDefinition, running: readonly number[], contexts: readonly BatchJobContext[]): Promise<Array<{ ok: true } | { ok: false; error: unknown }>> {
    const { invoker, hooks, workerId, timers } = this.deps;
    const joined: number[] = [];
    let waiting = running.length;
    let release!: (result: { thrown?: { error: unknown } }) => void;
    const result = new Promise<{ thrown?: { error: unknown } }>((resolve) => (release = resolve));
    let timedOut = false;
    const start = () => {
      if (timedOut) return;
      const members = [...joined].sort((a, b) => a - b);
      run.joined(members);
      const jobs = members.map((i) => contexts[i]!);
      if (jobs.length === 0) return release({});
      const context: BatchContext = Object.freeze({ name: run.jobs[0]!.name, size: jobs.length, signal: run.signal, logger: batchLogger(this.deps.logger, run.jobs[0]!.name, jobs.length) });
      // A throw before the call's promise exists (an invoker without invokeBatch, a synchronous
      // throw) is the call's throw: every job waiting on it must hear of it.
      let work: Promise<void>;
      try {
        work = invoker.invokeBatch!(jobs, context);
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        () => release({}),
        (error: unknown) => release({ thrown: { error } }),
      );
    };
    const arrived = () => {
      waiting -= 1;
      if (waiting === 0) start();
    };
    let timer: unknown;
    const timeoutMs = definition.timeoutMs;
    const deadline =
      timeoutMs === undefined
        ? undefined
        : new Promise<never>((_, reject) => {
            timer = timers.setTimeout(() => {
              const error = new JobTimeoutError(timeoutMs);
              timedOut = true;
              run.abortAll(error);
              release({ thrown: { error } });
              reject(error);
            }, timeoutMs);
          });
    deadline?.catch(() => undefined);
    try {
      return await Promise.all(
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
          const chain = (hooks.length === 0 ? invoke() : runAttemptHooks(hooks, attemptHookContext(job, context, workerId), invoke)).finally(() => {
            if (!reached) arrived();
          });
          try {
            await (deadline ? Promise.race([chain, deadline]) : chain);
            return { ok: true as const };
          } catch (error) {
            return { ok: false as const, error };
          }
        }),
      );
    } finally {
      if (timer !== undefined) timers.clearTimeout(timer);
    }
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
