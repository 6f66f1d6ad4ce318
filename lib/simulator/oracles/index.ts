import { AttemptBudgetOracle } from './attempt-budget.oracle.js';
import { BatchHandlerOracle } from './batch-handler.oracle.js';
import { BatchOracle } from './batch.oracle.js';
import { ClaimFillOracle } from './claim-fill.oracle.js';
import { ConcurrencyLimitOracle } from './concurrency-limit.oracle.js';
import { DependencyOrderOracle } from './dependency-order.oracle.js';
import { GroupTurnsOracle } from './group-turns.oracle.js';
import { EffectsOnceOracle } from './effects-once.oracle.js';
import { LivenessOracle } from './liveness.oracle.js';
import { LostJobOracle } from './lost-job.oracle.js';
import { OccurrenceOracle } from './occurrence.oracle.js';
import type { Oracle } from './oracle.js';
import { OutcomeProvenanceOracle } from './outcome-provenance.oracle.js';
import { PriorityOrderOracle } from './priority-order.oracle.js';
import { ProgressProvenanceOracle } from './progress-provenance.oracle.js';
import { RateLimitOracle } from './rate-limit.oracle.js';
import { ScheduleCatchUpOracle } from './schedule-catch-up.oracle.js';
import { SequenceOracle } from './sequence.oracle.js';
import { SingleLeaseOracle } from './single-lease.oracle.js';
import { SnoozeOracle } from './snooze.oracle.js';
import { ShutdownBoundOracle } from './shutdown-bound.oracle.js';
import { TerminalStateOracle } from './terminal-state.oracle.js';
import { UniqueKeyOracle } from './unique-key.oracle.js';
import { WindowOracle } from './window.oracle.js';

export * from './oracle.js';
export type { WaiterDue } from './batch.oracle.js';
export {
  AttemptBudgetOracle,
  BatchHandlerOracle,
  BatchOracle,
  ClaimFillOracle,
  ConcurrencyLimitOracle,
  DependencyOrderOracle,
  EffectsOnceOracle,
  GroupTurnsOracle,
  LivenessOracle,
  LostJobOracle,
  OccurrenceOracle,
  OutcomeProvenanceOracle,
  PriorityOrderOracle,
  ProgressProvenanceOracle,
  RateLimitOracle,
  ScheduleCatchUpOracle,
  SequenceOracle,
  SingleLeaseOracle,
  SnoozeOracle,
  ShutdownBoundOracle,
  TerminalStateOracle,
  UniqueKeyOracle,
  WindowOracle,
};

/** Every oracle, in the order their reports are printed. */
export function createOracles(
  caps: ReadonlyMap<string, number>,
  options: { shutdownBoundMs: number },
): { all: Oracle[]; limits: ConcurrencyLimitOracle; rates: RateLimitOracle; fill: ClaimFillOracle; windows: WindowOracle; sequences: SequenceOracle; batches: BatchOracle; batchHandlers: BatchHandlerOracle } {
  const limits = new ConcurrencyLimitOracle(caps);
  const rates = new RateLimitOracle();
  const fill = new ClaimFillOracle(caps);
  const windows = new WindowOracle();
  const sequences = new SequenceOracle();
  const batches = new BatchOracle();
  const batchHandlers = new BatchHandlerOracle();
  return {
    limits,
    rates,
    fill,
    windows,
    sequences,
    batches,
    batchHandlers,
    all: [
      new OutcomeProvenanceOracle(),
      new ProgressProvenanceOracle(),
      new LostJobOracle(),
      new TerminalStateOracle(),
      new SingleLeaseOracle(),
      new AttemptBudgetOracle(),
      new SnoozeOracle(),
      new EffectsOnceOracle(),
      limits,
      rates,
      new DependencyOrderOracle(),
      new OccurrenceOracle(),
      new UniqueKeyOracle(),
      windows,
      sequences,
      batches,
      batchHandlers,
      new PriorityOrderOracle(),
      new GroupTurnsOracle(),
      fill,
      new ScheduleCatchUpOracle(),
      new LivenessOracle(),
      new ShutdownBoundOracle(options.shutdownBoundMs),
    ],
  };
}
