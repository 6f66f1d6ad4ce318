import { SeededRandom } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { FunctionInvoker, PermanentJobError, WorkerNode, type FunctionBatchHandler, type FunctionHandler, type JobContext, type JobInvoker } from '../worker/index.js';
import { handlerSleep } from './handler-sleep.js';
import { simBatchHandler } from './sim-batch-handler.js';
import type { EventLog } from './sim-event.js';
import { SIM_MAX_SNOOZES, type SimSettings } from './sim-settings.js';
import type { NodeTimers, VirtualScheduler } from './virtual-scheduler.js';
import { SIM_BATCH_HANDLER_JOB, SIM_JOB, SIM_QUEUE, SIM_STEP_JOB, type SimPayload } from './workload.js';

export interface SimNodeDeps {
  readonly settings: SimSettings;
  readonly workerId: string;
  readonly store: JobStore;
  readonly scheduler: VirtualScheduler;
  readonly timers: NodeTimers;
  readonly random: SeededRandom;
  readonly log: EventLog;
  /** The sabotage self-test's broken invoker, wrapped around the real one (sabotage/mutants.ts). */
  readonly sabotageInvoker?: (invoker: JobInvoker) => JobInvoker;
}

/**
 * A production {@link WorkerNode}, unchanged, wired to virtual time, a faulty link to the store and
 * handlers whose durations and failures come from the seed. Every execution is logged, so the
 * oracles can see a handler that ran while its lease was gone.
 */
export function createSimNode(deps: SimNodeDeps): WorkerNode {
  const { settings, workerId, store, scheduler, timers, random, log, sabotageInvoker } = deps;
  const w = settings.workload;

  const run = async (payload: SimPayload, context: JobContext<SimPayload>) => {
    const { jobId, attempt } = context;
    const started = scheduler.now();
    // A debounced or throttled payload names its enqueue, for the window oracle; other events carry
    // nothing more, so a seed without windows keeps its event hash.
    log.emit({ type: 'exec', at: scheduler.now(), workerId, jobId, attempt, phase: 'start', ...(payload.from === undefined ? {} : { from: payload.from }) });
    // Progress names its reporter, so the progress oracle can tell whose value a row holds. It
    // draws nothing from the seed's stream: the runs' other choices stay as they were.
    void context.reportProgress({ workerId, attempt, step: 'started' });
    const slow = random.next() < w.slowChance;
    const duration = slow ? Math.floor(settings.leaseMs * (1.5 + random.next() * 2)) : w.handlerMinMs + random.nextInt(w.handlerMaxMs - w.handlerMinMs + 1);
    const ignoresAbort = random.next() < w.ignoresAbort;
    try {
      await handlerSleep(timers, duration, ignoresAbort ? undefined : context.signal);
      void context.reportProgress({ workerId, attempt, step: 'finished' });
    } finally {
      log.emit({ type: 'exec', at: scheduler.now(), workerId, jobId, attempt, phase: 'end' });
    }
    // A downstream still broken when the attempt began: the job fails for good (SimPayload.brokenForMs).
    if (payload.brokenForMs !== undefined && started < context.scheduledFor.getTime() + payload.brokenForMs) throw new PermanentJobError('downstream broken');
    switch (payload.kind) {
      case 'poison':
        throw new Error('poison job');
      case 'permanent':
        throw new PermanentJobError('permanent failure');
      case 'snoozy':
        if (context.snoozes < (payload.snoozeTimes ?? 0)) return context.snooze(payload.snoozeMs ?? 0);
        if (attempt - context.snoozes <= payload.failTimes) throw new Error(`planned failure ${attempt - context.snoozes} of ${payload.failTimes}`);
        return undefined;
      default:
        if (attempt <= payload.failTimes) throw new Error(`planned failure ${attempt} of ${payload.failTimes}`);
        return undefined;
    }
  };

  const handler = { handle: run, retry: { baseDelayMs: w.retryBaseMs, maxDelayMs: w.retryMaxMs }, maxSnoozes: SIM_MAX_SNOOZES };
  // Registered only in runs with its jobs: a batch handler gives the node's local queue room for
  // its largest batch, which would change every claim of a seed drawn without them.
  const handlers: Record<string, FunctionHandler<never> | FunctionBatchHandler<never>> = { [SIM_JOB]: handler, [SIM_STEP_JOB]: handler };
  if (w.batchHandled > 0) handlers[SIM_BATCH_HANDLER_JOB] = simBatchHandler({ settings, workerId, scheduler, timers, random, log });
  const invoker = new FunctionInvoker(handlers);
  return new WorkerNode({
    store,
    invoker: sabotageInvoker ? sabotageInvoker(invoker) : invoker,
    clock: scheduler,
    timers,
    random: new SeededRandom(BigInt(random.nextUint32())),
    options: {
      workerId,
      queues: [SIM_QUEUE],
      concurrency: settings.concurrency,
      claimBatchSize: settings.claimBatchSize,
      claimAhead: settings.claimAhead,
      claimAheadMs: settings.claimAheadMs,
      leaseMs: settings.leaseMs,
      heartbeatIntervalMs: settings.heartbeatIntervalMs,
      pollIntervalMs: settings.pollIntervalMs,
      maintenanceIntervalMs: settings.maintenanceIntervalMs,
      scheduleCheckIntervalMs: 2_000,
      shutdownGraceMs: simShutdownGraceMs(settings),
      retentionMs: null,
    },
  });
}

/** How long a simulated node's stop waits for running attempts. */
export function simShutdownGraceMs(settings: SimSettings): number {
  return settings.leaseMs;
}
