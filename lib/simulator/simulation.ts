import { checkOptions, SeededRandom } from '../core/index.js';
import { MemoryJobStore, type EnqueueResult, type JobStore } from '../store/index.js';
import { STOP_OVERRUN_MS, type WorkerNode } from '../worker/index.js';
import { NodeLink, type LinkCounters } from './node-link.js';
import { createOracles, TERMINAL, type OracleReport } from './oracles/index.js';
import type { Mutant } from './sabotage/mutants.js';
import { EventLog, rowView, type FaultKind, type RowView, type SimEvent, type SimListener } from './sim-event.js';
import { createSimNode, simShutdownGraceMs } from './sim-node.js';
import { deriveSettings, type FaultSettings, type SimSettings } from './sim-settings.js';
import { StoreGateway } from './store-gateway.js';
import { verifyHistory } from '../verify/index.js';
import { NodeTimers, VirtualScheduler } from './virtual-scheduler.js';
import { FaultInjector, type FaultTarget } from './fault-injector.js';
import { SequenceOperator } from './sequence-operator.js';
import { BatchIds } from './batch-ids.js';
import { BatchOperator } from './batch-operator.js';
import { buildWorkload, SIM_QUEUE, type EnqueueBatch } from './workload.js';

/** Virtual time starts here (2026-01-01T00:00:00Z), so cron patterns see real calendar dates. */
const EPOCH = Date.UTC(2026, 0, 1);

/** Every coverage counter at zero: a run's start, and a seed batch's sum before its first run. */
export function noCoverage(): SimCoverage {
  return {
    staleOutcomesFenced: 0,
    leasesLostMidHandler: 0,
    unknownCommits: 0,
    limitSaturations: 0,
    limitChangesWhileRunning: 0,
    rateLimitSaturations: 0,
    claimsShortBesideHeld: 0,
    reExecutions: 0,
    refusedCalls: 0,
    withheldCalls: 0,
    uniqueKept: 0,
    uniqueReplaced: 0,
    replaysRefusedForKey: 0,
    scheduleCatchUps: 0,
    lowerBoundCounts: 0,
    stopsGivenUp: 0,
    snoozesApplied: 0,
    snoozeLimitsReached: 0,
    debounced: 0,
    debouncesCapped: 0,
    throttled: 0,
    throttleWindowsReopened: 0,
    sequenceBlocks: 0,
    sequenceContinues: 0,
    sequenceCancelsInLine: 0,
    sequenceReplaysReleased: 0,
    batchCallbacksRun: 0,
    batchCallbacksSkipped: 0,
    onFailureRuns: 0,
    onFailureSkips: 0,
    batchCancels: 0,
    batchHandlerCalls: 0,
    batchHandlerFailedAlone: 0,
    batchHandlerThrows: 0,
    batchHandlerLeasesLost: 0,
  };
}

/** Coverage: how often the run reached the situations the guarantees are about. */
export interface SimCoverage {
  /** Reports the fenced write refused (the store answered `stale`). */
  staleOutcomesFenced: number;
  /** Attempts a node aborted because it lost its lease (or saw it lapse) while the handler ran. */
  leasesLostMidHandler: number;
  /** Calls that committed but whose reply was lost. */
  unknownCommits: number;
  /** Claims that left a concurrency key exactly at its cap. */
  limitSaturations: number;
  /** Operator limit changes made while that key's jobs ran. */
  limitChangesWhileRunning: number;
  /** Claims that left a rate-limited queue or key with every start of its window used. */
  rateLimitSaturations: number;
  /** Claims that took fewer jobs than asked while a limit held due jobs back (the claim_fill oracle's case). */
  claimsShortBesideHeld: number;
  /** Handler executions beyond the first for the same job. */
  reExecutions: number;
  /** Calls refused, and withheld and delivered late, during isolations. */
  refusedCalls: number;
  withheldCalls: number;
  /** Enqueues whose unique key was held: kept, or the holder rewritten (mode replace). */
  uniqueKept: number;
  uniqueReplaced: number;
  /** Replays refused because another unfinished job held the job's unique key. */
  replaysRefusedForKey: number;
  /** Minting passes that found a schedule's ticks missed, and those that could only bound the count. */
  scheduleCatchUps: number;
  lowerBoundCounts: number;
  /** Graceful stops that waited until their deadline and then gave up on what was still in flight. */
  stopsGivenUp: number;
  /** Snoozes the fenced write applied, and jobs dead-lettered for asking one more than their limit. */
  snoozesApplied: number;
  snoozeLimitsReached: number;
  /** Enqueues answered `debounced`, and debounce rewrites whose run time the window's end cut short. */
  debounced: number;
  debouncesCapped: number;
  /** Enqueues answered `throttled`, and throttle windows opened on a key after its last one closed. */
  throttled: number;
  throttleWindowsReopened: number;
  /**
   * Sequenced jobs that failed for good and held the `block` job behind them; `continue` jobs whose
   * turn came past such a failure; jobs cancelled before their turn (which keep their place); and
   * failures that held a sequence until a replay succeeded.
   */
  sequenceBlocks: number;
  sequenceContinues: number;
  sequenceCancelsInLine: number;
  sequenceReplaysReleased: number;
  /**
   * Batch callbacks that ran, and those the store cancelled unrun because their case did not come
   * (onSuccess after a failure, onFailure when every job succeeded); the same for dependants in
   * mode `on_failure`; and batches an operator cancelled (`jobCancelBatch`) before they ended.
   */
  batchCallbacksRun: number;
  batchCallbacksSkipped: number;
  onFailureRuns: number;
  onFailureSkips: number;
  batchCancels: number;
  /**
   * Calls of the batch handler that held two jobs or more; failures the store applied to a job the
   * handler failed alone in such a call that returned, and to the jobs of a call that threw; and
   * jobs whose lease was lost between their claim and their call's start.
   */
  batchHandlerCalls: number;
  batchHandlerFailedAlone: number;
  batchHandlerThrows: number;
  batchHandlerLeasesLost: number;
}

/** What one seed's run did: its settings, a hash of every event, counts, and each oracle's verdict. */
export interface SimResult {
  readonly settings: SimSettings;
  readonly mutant: string | null;
  /** SHA-256 over every event: two runs of one seed must agree. */
  readonly hash: string;
  readonly events: number;
  readonly jobs: number;
  readonly oracles: readonly OracleReport[];
  readonly faults: Readonly<Record<FaultKind, number>>;
  readonly coverage: SimCoverage;
  /** Virtual ms from the end of the safety phase until everything was terminal, or null if it never was. */
  readonly drainedAfterMs: number | null;
  readonly violations: number;
  /** Worker nodes started: the first ones plus one per crash. */
  readonly bootedNodes: number;
  /**
   * What `verifyHistory` (docs/verify.md) found in the store's own history after the run: the
   * production checker over what the run recorded, beside the oracles that watched it happen. Its
   * violations count in `violations` too.
   */
  readonly history: {
    readonly entries: number;
    readonly jobs: number;
    /** Starts judged against a concurrency limit, and against a rate, from the audit log's record of them. */
    readonly capStarts: number;
    readonly rateStarts: number;
    readonly violations: number;
    readonly rules: readonly string[];
  };
}

/** How to run one seed beyond what the seed decides. */
export interface SimOptions {
  /** Run with deliberately broken lifecycle rules (the sabotage self-test). */
  readonly mutant?: Mutant;
  /** Called with each event, for a trace. */
  readonly trace?: (event: SimEvent) => void;
}

const NO_FAULTS: FaultSettings = Object.freeze({
  crashEveryMs: 0,
  isolateEveryMs: 0,
  isolateMaxMs: 0,
  pauseEveryMs: 0,
  hintLoss: 0,
  hintDuplicate: 0,
  hintDelayMaxMs: 0,
  ackLoss: 0,
  latencyMaxMs: 0,
  operatorEveryMs: 0,
  limitChangeEveryMs: 0,
  shutdownEveryMs: 0,
  rateChangeEveryMs: 0,
  sequenceOperatorEveryMs: 0,
  batchOperatorEveryMs: 0,
});

interface SimNode extends FaultTarget {
  readonly worker: WorkerNode;
}

/** Keeps the latest row of every job, and how many are not terminal yet. */
class RowMirror implements SimListener {
  readonly rows = new Map<string, RowView>();
  open = 0;

  onEvent(event: SimEvent): void {
    if (event.type !== 'write') return;
    const was = this.rows.get(event.after.id);
    if (was === undefined || TERMINAL.has(was.state)) this.open += TERMINAL.has(event.after.state) ? 0 : 1;
    else if (TERMINAL.has(event.after.state)) this.open -= 1;
    this.rows.set(event.after.id, event.after);
  }
}

/**
 * Runs one seed: N production worker nodes against the in-memory store on virtual time, a
 * producer, an operator and the faults the seed switched on (the safety phase), then everything
 * heals and all work must drain within the stated bound (the liveness phase). Every event goes to
 * the oracles and into the run's hash.
 */
export async function runSimulation(seed: bigint, options: SimOptions = {}): Promise<SimResult> {
  checkOptions(options, ['mutant', 'trace'], { what: 'simulation' });
  const settings = deriveSettings(seed);
  const random = new SeededRandom(seed);
  // A run with a schedule outage starts that long before the epoch: the schedules are created,
  // then no node runs until the epoch, so the first minting pass finds them far behind.
  const scheduler = new VirtualScheduler(EPOCH - settings.workload.scheduleOutageMs);
  const workload = buildWorkload(settings.workload, settings.safetyMs, random, {
    everyMs: settings.faults.limitChangeEveryMs,
    random: new SeededRandom(seed ^ 0x11_0019_0002n),
  }, {
    everyMs: settings.faults.rateChangeEveryMs,
    random: new SeededRandom(seed ^ 0x4a7e_0001n),
  });
  const stopBoundMs = simShutdownGraceMs(settings) + STOP_OVERRUN_MS;
  const oracles = createOracles(workload.caps, { shutdownBoundMs: stopBoundMs });
  const mirror = new RowMirror();
  const faultCounts = Object.fromEntries(
    (['crash', 'isolate_fail', 'isolate_withhold', 'pause', 'hint_lost', 'hint_duplicated', 'hint_delayed', 'ack_lost', 'operator_cancel', 'operator_replay', 'operator_discard', 'operator_limit', 'operator_rate_limit', 'operator_batch_cancel', 'shutdown'] as FaultKind[]).map((k) => [k, 0]),
  ) as Record<FaultKind, number>;
  const executed = new Set<string>();
  let reExecutions = 0;
  const stopping = new Map<string, number>();
  const tally: SimListener = {
    onEvent(event) {
      if (event.type === 'fault') faultCounts[event.kind] += 1;
      if (event.type === 'fault' && event.kind === 'shutdown') stopping.set(event.target, event.at);
      if (event.type === 'stopped' && event.at - (stopping.get(event.target) ?? event.at) >= stopBoundMs) coverage.stopsGivenUp += 1;
      if (event.type === 'exec' && event.phase === 'start') {
        if (executed.has(event.jobId)) reExecutions += 1;
        executed.add(event.jobId);
      }
      if (event.type === 'call' && (event.op === 'jobCompleteMany' || event.op === 'jobRelinquishMany') && Array.isArray(event.result)) {
        coverage.staleOutcomesFenced += (event.result as { status: string }[]).filter((r) => r.status === 'stale').length;
      }
      if (event.type === 'write' && event.after.snoozes > (event.before?.snoozes ?? 0)) coverage.snoozesApplied += 1;
      if (event.type === 'write' && event.after.state === 'dead_lettered' && event.before?.state === 'running' && event.after.lastError?.startsWith('asked to snooze again')) {
        coverage.snoozeLimitsReached += 1;
      }
      if (event.type === 'call' && event.op === 'jobEnqueueMany' && Array.isArray(event.result)) {
        for (const result of event.result as EnqueueResult[]) {
          if (result.deduplicated === 'kept') coverage.uniqueKept += 1;
          if (result.deduplicated === 'replaced') coverage.uniqueReplaced += 1;
          if (result.deduplicated === 'debounced') coverage.debounced += 1;
          if (result.deduplicated === 'throttled') coverage.throttled += 1;
        }
      }
      if (event.type === 'call' && event.op === 'jobReplay' && event.error?.includes('holds its unique key')) coverage.replaysRefusedForKey += 1;
      if (event.type === 'call' && event.op === 'scheduleMintDue' && event.result) {
        for (const skip of (event.result as { skipped: { reason: string; lowerBound?: true }[] }).skipped) {
          if (skip.reason === 'missed') coverage.scheduleCatchUps += 1;
          if (skip.lowerBound) coverage.lowerBoundCounts += 1;
        }
      }
    },
  };
  const trace: SimListener[] = options.trace ? [{ onEvent: options.trace }] : [];
  const log = new EventLog([mirror, ...oracles.all, tally, ...trace]);
  const coverage = noCoverage();
  const counters: LinkCounters = { ackLost: 0, refused: 0, withheld: 0 };

  const store = new MemoryJobStore({
    clock: scheduler,
    probe: StoreGateway.probe(log, scheduler),
    lifecycle: options.mutant?.rules,
    enforceUniqueKeys: options.mutant?.ignoresUniqueKeys !== true,
  });
  options.mutant?.sabotageStore?.(store);
  // Batches get their ids from a stream of their own (batch-ids.ts), drawn only by batches.
  const gateway = new StoreGateway(store, log, scheduler, new BatchIds(store, new SeededRandom(seed ^ 0xba7c_0001n)));
  let faults: FaultSettings = settings.faults;
  const currentFaults = () => faults;
  let phase: 'safety' | 'liveness' = 'safety';

  // The producer and the operator: never isolated, but the producer's replies can be lost.
  const producerTimers = new NodeTimers(scheduler);
  const producer = new NodeLink({ kind: 'producer' }, gateway, store, scheduler, producerTimers, random, currentFaults, log, counters).view();
  const operator = (op: string, ...args: unknown[]) => gateway.execute({ kind: 'operator' }, op, args);

  const nodes: SimNode[] = [];
  const workers: WorkerNode[] = [];
  const boot = (index: number, generation: number): SimNode => {
    const timers = new NodeTimers(scheduler);
    const workerId = `node${index}.${generation}`;
    const link = new NodeLink({ kind: 'worker', workerId }, gateway, store, scheduler, timers, random, currentFaults, log, counters);
    if (phase === 'liveness') link.calmHints();
    const worker = createSimNode({ settings, workerId, store: link.view(), scheduler, timers, random, log, sabotageInvoker: options.mutant?.sabotageInvoker });
    workers.push(worker);
    void worker.start();
    return { index, generation, timers, link, worker, down: false, stop: () => worker.stop() };
  };
  // Idempotent: the liveness phase restarts crashed nodes at once, and their own restart timer
  // must not then boot a second node under the same worker id.
  const restart = (node: SimNode) => {
    if (!node.down) return;
    node.down = false;
    nodes[node.index] = boot(node.index, node.generation + 1);
  };

  for (const schedule of workload.schedules) await operator('scheduleUpsert', { schedule });
  if (workload.queueRate) await operator('rateLimitSet', { target: { queue: SIM_QUEUE }, rate: workload.queueRate });
  await scheduler.run(EPOCH);
  for (let i = 0; i < settings.nodes; i++) nodes.push(boot(i, 0));
  let pendingBatches = workload.batches.length;
  const enqueue = (batch: EnqueueBatch) => {
    const acknowledged = (ids: string[]) => {
      pendingBatches -= 1;
      // The ids the store answered with: a job whose unique key was held is acknowledged as its holder.
      log.emit({ type: 'ack', at: scheduler.now(), ids });
    };
    // Unknown outcome: enqueue again with the same ids (a stored job is not written twice). A batch
    // with callbacks has no ids of its own to give: it is written again, as a new batch.
    const again = () => producerTimers.setTimeout(() => enqueue(batch), 100 + random.nextInt(400));
    const store = producer as JobStore;
    if (batch.callbacks === undefined) {
      store.jobEnqueueMany({ jobs: batch.inputs }).then((results) => acknowledged(results.map((result) => result.id)), again);
    } else {
      store.jobEnqueueBatch({ jobs: batch.inputs, ...batch.callbacks }).then(({ jobs, callbacks }) => acknowledged([...jobs.map((job) => job.id), ...Object.values(callbacks)]), again);
    }
  };
  for (const batch of workload.batches) producerTimers.setTimeout(() => enqueue(batch), batch.atMs);

  const injector = new FaultInjector({
    settings,
    scheduler,
    random,
    log,
    nodes: () => nodes,
    restart: (node) => restart(node as SimNode),
    rows: () => mirror.rows.values(),
    operator,
    shutdownBoundMs: stopBoundMs,
    sequenced: workload.sequenced,
  });
  injector.start();
  const sequenceOperator = new SequenceOperator({
    scheduler,
    random: new SeededRandom(seed ^ 0x5e9_0001n),
    log,
    rows: () => mirror.rows.values(),
    operator,
    sequenced: workload.sequenced,
    everyMs: settings.faults.sequenceOperatorEveryMs,
  });
  sequenceOperator.start();
  const batchOperator = new BatchOperator({
    scheduler,
    random: new SeededRandom(seed ^ 0xba7c_0002n),
    log,
    rows: () => mirror.rows.values(),
    operator,
    everyMs: settings.faults.batchOperatorEveryMs,
  });
  batchOperator.start();
  // The operator changes caps as the workload planned; the limit oracle reads each change from its call.
  for (const change of workload.limitChanges) {
    scheduler.at(change.atMs, () => {
      void operator('concurrencyLimitSet', { target: { key: change.key }, max: change.max }).then(() =>
        log.emit({ type: 'fault', at: scheduler.now(), kind: 'operator_limit', target: `${change.key}=${change.max}` }),
      );
    });
  }

  // And the keys' rates; the rate oracle reads each change from its call too.
  for (const change of workload.rateChanges) {
    scheduler.at(change.atMs, () => {
      void operator('rateLimitSet', { target: { key: change.key }, rate: change.rate }).then(() =>
        log.emit({ type: 'fault', at: scheduler.now(), kind: 'operator_rate_limit', target: `${change.key}=${change.rate ? `${change.rate.max}/${change.rate.perMs}ms` : null}` }),
      );
    });
  }

  await scheduler.run(EPOCH + settings.safetyMs);

  // Liveness: faults stop, isolations heal, crashed nodes come back, schedules stop minting, and the
  // operator discards the sequences' failures from now on.
  phase = 'liveness';
  injector.stop();
  faults = NO_FAULTS;
  log.emit({ type: 'phase', at: scheduler.now(), phase: 'liveness' });
  for (const node of [...nodes]) {
    node.link.heal();
    node.link.calmHints();
    restart(node);
  }
  for (const schedule of workload.schedules) await operator('schedulePause', { scheduleId: schedule.id });
  sequenceOperator.sweepFromNow();
  batchOperator.stop();
  const livenessStart = scheduler.now();
  const drained = () => pendingBatches === 0 && mirror.open === 0;
  await scheduler.run(livenessStart + settings.livenessBoundMs, drained);
  const isDrained = drained();
  const drainedAfterMs = isDrained ? scheduler.now() - livenessStart : null;

  const rows = store.rows().map(rowView);
  const schedules = await store.scheduleList({ limit: 1_000 });
  for (const oracle of oracles.all) oracle.finish({ now: scheduler.now(), rows, schedules, drained: isDrained });
  coverage.leasesLostMidHandler = workers.reduce((sum, w) => sum + w.stats.leasesLost, 0);
  coverage.unknownCommits = counters.ackLost;
  coverage.limitSaturations = oracles.limits.saturations;
  coverage.limitChangesWhileRunning = oracles.limits.changesWhileRunning;
  coverage.rateLimitSaturations = oracles.rates.saturations;
  coverage.claimsShortBesideHeld = oracles.fill.shortBesideHeld;
  coverage.debouncesCapped = oracles.windows.debouncesCapped;
  coverage.throttleWindowsReopened = oracles.windows.throttleWindowsReopened;
  coverage.sequenceBlocks = oracles.sequences.blocks;
  coverage.sequenceContinues = oracles.sequences.continues;
  coverage.sequenceCancelsInLine = oracles.sequences.cancelsInLine;
  coverage.sequenceReplaysReleased = oracles.sequences.replaysReleased;
  coverage.batchCallbacksRun = oracles.batches.callbacksRun;
  coverage.batchCallbacksSkipped = oracles.batches.callbacksSkipped;
  coverage.onFailureRuns = oracles.batches.watchersRun;
  coverage.onFailureSkips = oracles.batches.watchersSkipped;
  coverage.batchCancels = oracles.batches.batchCancels;
  coverage.batchHandlerCalls = oracles.batchHandlers.sharedCalls;
  coverage.batchHandlerFailedAlone = oracles.batchHandlers.failedAlone;
  coverage.batchHandlerThrows = oracles.batchHandlers.thrownFailures;
  coverage.batchHandlerLeasesLost = oracles.batchHandlers.lostBeforeCall;
  coverage.reExecutions = reExecutions;
  coverage.refusedCalls = counters.refused;
  coverage.withheldCalls = counters.withheld;
  const reports = oracles.all.map((o) => o.report());
  const verified = await verifyHistory(store);
  return {
    settings,
    mutant: options.mutant?.name ?? null,
    hash: log.digest(),
    events: log.count,
    jobs: rows.length,
    oracles: reports,
    faults: faultCounts,
    coverage,
    drainedAfterMs,
    violations: reports.reduce((sum, r) => sum + r.violations, 0) + verified.violationCount,
    bootedNodes: workers.length,
    history: {
      entries: verified.checked.entries,
      jobs: verified.checked.jobs,
      capStarts: verified.checked.capStarts,
      rateStarts: verified.checked.rateStarts,
      violations: verified.violationCount,
      rules: [...new Set(verified.violations.map((v) => v.rule))],
    },
  };
}
