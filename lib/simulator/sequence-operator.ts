import { DEAD_LETTER_STATES, isDeadLetterState, type SeededRandom } from '../core/index.js';
import type { BlockedSequence } from '../store/index.js';
import type { EventLog, FaultKind, RowView } from './sim-event.js';
import { SIM_SEQUENCE_SWEEP_MS } from './sim-settings.js';
import { everyRandomly } from './every-randomly.js';
import type { CallResult } from './store-gateway.js';
import type { VirtualScheduler } from './virtual-scheduler.js';

export interface SequenceOperatorDeps {
  readonly scheduler: VirtualScheduler;
  /** A stream of its own, so the run's other draws stay as they were. */
  readonly random: SeededRandom;
  readonly log: EventLog;
  /** The latest row of every job. */
  readonly rows: () => Iterable<RowView>;
  readonly operator: (op: string, ...args: unknown[]) => Promise<CallResult>;
  /** The ids of the sequenced jobs (Workload.sequenced). */
  readonly sequenced: ReadonlySet<string>;
  /** FaultSettings.sequenceOperatorEveryMs. */
  readonly everyMs: number;
}

/**
 * The operator's care of the sequences. In the safety phase, at seeded intervals around `everyMs`:
 * cancels a sequenced job still waiting its turn, or takes a blocked sequence from
 * `jobListBlockedSequences` and replays the job that holds it (two times in three; a job whose
 * downstream is back then succeeds) or discards it. In the liveness phase, with every other fault
 * gone, it discards every sequenced job that failed for good, each sweep, so that the run drains: the
 * jobs behind a `block` failure wait for an operator by design.
 */
export class SequenceOperator {
  private active = true;

  constructor(private readonly deps: SequenceOperatorDeps) {}

  start(): void {
    if (this.deps.sequenced.size === 0) return;
    everyRandomly(this.deps.scheduler, this.deps.random, this.deps.everyMs, () => this.active, () => this.act());
  }

  /** Ends the safety phase's actions and starts the liveness phase's sweeps. */
  sweepFromNow(): void {
    this.active = false;
    if (this.deps.sequenced.size === 0) return;
    // One call after another, each from a scheduler callback: the oracles group writes by the call
    // that follows them, so no two calls may interleave.
    const sweep = async () => {
      // From the rows rather than jobListBlockedSequences, which leaves out a failure whose next job
      // was cancelled before its turn, though every job after that one waits all the same.
      const failed = [...this.deps.rows()].filter((row) => this.deps.sequenced.has(row.id) && isDeadLetterState(row.state));
      for (const row of failed) await this.deps.operator('jobCancel', { jobId: row.id, onlyFrom: DEAD_LETTER_STATES });
      this.deps.scheduler.at(SIM_SEQUENCE_SWEEP_MS, () => void sweep());
    };
    this.deps.scheduler.at(0, () => void sweep());
  }

  private act(): void {
    const { random, operator, sequenced } = this.deps;
    if (random.next() < 0.3) {
      const target = this.pick([...this.deps.rows()].filter((row) => sequenced.has(row.id) && row.state === 'awaiting_parents'));
      if (target) void operator('jobCancel', { jobId: target.id }).then(() => this.record('operator_cancel', target.id));
      return;
    }
    void operator('jobListBlockedSequences', { limit: 100 }).then(({ result, error }) => {
      const target = error === null && this.active ? this.pick(result as BlockedSequence[]) : undefined;
      if (!target) return;
      const jobId = target.job.id;
      if (random.next() < 2 / 3) void operator('jobReplay', { jobId }).then(() => this.record('operator_replay', jobId));
      else void operator('jobCancel', { jobId, onlyFrom: DEAD_LETTER_STATES }).then(() => this.record('operator_discard', jobId));
    });
  }

  private pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.deps.random.nextInt(items.length)];
  }

  private record(kind: FaultKind, jobId: string): void {
    this.deps.log.emit({ type: 'fault', at: this.deps.scheduler.now(), kind, target: jobId });
  }
}
