import type { SeededRandom } from '../core/index.js';
import { PermanentJobError, type BatchContext, type BatchJob, type FunctionBatchHandler } from '../worker/index.js';
import { handlerSleep } from './handler-sleep.js';
import type { EventLog } from './sim-event.js';
import { SIM_MAX_SNOOZES, type SimSettings } from './sim-settings.js';
import type { NodeTimers, VirtualScheduler } from './virtual-scheduler.js';
import type { SimPayload } from './workload.js';

/** How often the simulated batch handler fails a job with `fail`, fails one for good, and throws. */
export const SIM_BATCH_FAIL_CHANCE = 0.2;
export const SIM_BATCH_PERMANENT_CHANCE = 0.05;
export const SIM_BATCH_THROW_CHANCE = 0.1;

export interface SimBatchHandlerDeps {
  readonly settings: SimSettings;
  readonly workerId: string;
  readonly scheduler: VirtualScheduler;
  readonly timers: NodeTimers;
  readonly random: SeededRandom;
  readonly log: EventLog;
}

/**
 * The batch handler of one node: a call runs as long as a single job's handler would (some for
 * longer than the lease), honouring or ignoring the call's signal, then draws each job's end from
 * the seed: most succeed, some are failed with `fail` (a fifth of those with `PermanentJobError`),
 * and now and then the whole call throws after failing some. Each call is logged as it starts and
 * ends (`batch_call`), so the batch handler oracle can hold every job's outcome to what the handler
 * decided; each job also logs its `exec` start and end and reports progress, as a single job does.
 */
export function simBatchHandler(deps: SimBatchHandlerDeps): FunctionBatchHandler<SimPayload> {
  const { settings, workerId, scheduler, timers, random, log } = deps;
  const w = settings.workload;
  let calls = 0;
  const handleBatch = async (jobs: readonly BatchJob<SimPayload>[], context: BatchContext) => {
    calls += 1;
    const call = `${workerId}#${calls}`;
    log.emit({
      type: 'batch_call',
      phase: 'start',
      at: scheduler.now(),
      workerId,
      call,
      name: context.name,
      size: w.batchHandlerSize,
      jobs: jobs.map(({ jobId, attempt, name }) => ({ jobId, attempt, name })),
    });
    for (const job of jobs) {
      log.emit({ type: 'exec', at: scheduler.now(), workerId, jobId: job.jobId, attempt: job.attempt, phase: 'start' });
      void job.reportProgress({ workerId, attempt: job.attempt, step: 'started' });
    }
    const failed: string[] = [];
    let threw = true;
    try {
      const slow = random.next() < w.slowChance;
      const duration = slow ? Math.floor(settings.leaseMs * (1.5 + random.next() * 2)) : w.handlerMinMs + random.nextInt(w.handlerMaxMs - w.handlerMinMs + 1);
      const ignoresAbort = random.next() < w.ignoresAbort;
      await handlerSleep(timers, duration, ignoresAbort ? undefined : context.signal);
      for (const job of jobs) {
        void job.reportProgress({ workerId, attempt: job.attempt, step: 'finished' });
        const roll = random.next();
        if (roll >= SIM_BATCH_FAIL_CHANCE + SIM_BATCH_PERMANENT_CHANCE) continue;
        job.fail(roll < SIM_BATCH_FAIL_CHANCE ? new Error(`planned failure in a batch of ${jobs.length}`) : new PermanentJobError(`permanent failure in a batch of ${jobs.length}`));
        failed.push(job.jobId);
      }
      if (random.next() < SIM_BATCH_THROW_CHANCE) throw new Error(`the batch call of ${jobs.length} failed`);
      threw = false;
    } finally {
      for (const job of jobs) log.emit({ type: 'exec', at: scheduler.now(), workerId, jobId: job.jobId, attempt: job.attempt, phase: 'end' });
      log.emit({ type: 'batch_call', phase: 'end', at: scheduler.now(), workerId, call, failed, threw });
    }
  };
  return {
    batch: { size: w.batchHandlerSize, waitMs: w.batchHandlerWaitMs },
    handleBatch,
    retry: { baseDelayMs: w.retryBaseMs, maxDelayMs: w.retryMaxMs },
    maxSnoozes: SIM_MAX_SNOOZES,
  };
}
