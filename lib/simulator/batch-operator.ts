import type { SeededRandom } from '../core/index.js';
import type { BatchSummary } from '../store/index.js';
import { TERMINAL } from './oracles/index.js';
import { everyRandomly } from './every-randomly.js';
import type { EventLog, FaultKind, RowView } from './sim-event.js';
import type { CallResult } from './store-gateway.js';
import type { VirtualScheduler } from './virtual-scheduler.js';

export interface BatchOperatorDeps {
  readonly scheduler: VirtualScheduler;
  /** A stream of its own, so the run's other draws stay as they were. */
  readonly random: SeededRandom;
  readonly log: EventLog;
  /** The latest row of every job. */
  readonly rows: () => Iterable<RowView>;
  readonly operator: (op: string, ...args: unknown[]) => Promise<CallResult>;
  /** FaultSettings.batchOperatorEveryMs; 0 = off. */
  readonly everyMs: number;
}

/**
 * The operator's care of the batches, in the safety phase, at seeded intervals around `everyMs`:
 * three times in ten it lists the batches (`jobListBatches`) and cancels one that has not ended
 * (`jobCancelBatch`: its callbacks, then its open jobs; a running one is asked to stop); half the
 * time it cancels one unfinished job of a batch, which the batch's callbacks then count as not
 * succeeded; otherwise it reads one batch (`jobBatch`). The batch oracle checks what each read
 * says against the rows. Nothing is left for the liveness phase: a batch's callbacks end with its
 * jobs.
 */
export class BatchOperator {
  private active = true;

  constructor(private readonly deps: BatchOperatorDeps) {}

  start(): void {
    everyRandomly(this.deps.scheduler, this.deps.random, this.deps.everyMs, () => this.active, () => this.act());
  }

  /** Ends the safety phase's actions. */
  stop(): void {
    this.active = false;
  }

  private act(): void {
    const { random, operator } = this.deps;
    const roll = random.next();
    if (roll < 0.3) {
      void operator('jobListBatches', { limit: 200 }).then(({ result, error }) => {
        const target = error === null && this.active ? this.pick((result as BatchSummary[]).filter((batch) => !batch.ended)) : undefined;
        if (target) void operator('jobCancelBatch', { batchId: target.id }).then(() => this.record('operator_batch_cancel', target.id));
      });
      return;
    }
    const rows = [...this.deps.rows()].filter((row) => row.batch !== undefined);
    if (roll < 0.8) {
      const target = this.pick(rows.filter((row) => row.batch!.callback === null && !TERMINAL.has(row.state)));
      if (target) void operator('jobCancel', { jobId: target.id }).then(() => this.record('operator_cancel', target.id));
      return;
    }
    const target = this.pick(rows);
    if (target) void operator('jobBatch', { batchId: target.batch!.id });
  }

  private pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.deps.random.nextInt(items.length)];
  }

  private record(kind: FaultKind, target: string): void {
    this.deps.log.emit({ type: 'fault', at: this.deps.scheduler.now(), kind, target });
  }
}
