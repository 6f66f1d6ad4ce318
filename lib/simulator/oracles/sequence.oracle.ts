import { isDeadLetterState } from '../../core/index.js';
import type { EnqueueResult, SequenceAfterFailure } from '../../store/index.js';
import type { RowView, SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL, type CallEvent, type WriteEvent } from './oracle.js';

/** An enqueue as the gateway logs it: its id and, when it joins one, its sequence. */
interface LoggedInput {
  readonly id: string;
  readonly sequence?: { readonly key: string; readonly afterFailure?: SequenceAfterFailure };
}

/** One sequence: its jobs in enqueue order, and how many of them have had their turn. */
interface Line {
  readonly key: string;
  readonly jobs: string[];
  turns: number;
}

interface Place {
  readonly line: Line;
  readonly index: number;
  readonly afterFailure: SequenceAfterFailure;
}

/**
 * The jobs of a sequence run one at a time, in enqueue order, judged from the enqueues' arguments
 * and answers (the order the store wrote the jobs in: a batch's in its order, an id already stored
 * joining nothing) and the rows as stored.
 *
 * A job's turn comes when the job before it has had its turn and has ended: succeeded or cancelled,
 * or dead-lettered or quarantined when the job's own `afterFailure` is `continue` (the default,
 * `block`, waits until an operator replays that job and it succeeds, or discards it). The first
 * job of a key has its turn at once. So a job cancelled before its turn keeps its place: the job
 * after it waits for the jobs before it. A turn, once come, stays.
 *
 * - no job is claimed (any attempt: a retry or a reclaim is the same job going on) before its turn;
 * - no claim leaves two jobs of one sequence holding a live lease.
 *
 * A job an operator replays after the job behind it had its turn (past it, `continue`) has had its
 * turn all the same, but must not run beside a later job: docs/sequences.md promises that no two
 * jobs of a sequence ever run at once.
 *
 * Failures that held a `block` job, `continue` jobs that ran on past one, jobs cancelled before
 * their turn, and failures that held a sequence until a replay succeeded are counted as coverage.
 */
export class SequenceOracle extends Oracle {
  readonly name = 'sequence_order';
  /** Jobs that failed for good and held the `block` job behind them. */
  blocks = 0;
  /** `continue` jobs whose turn came past a job that failed for good. */
  continues = 0;
  /** Jobs cancelled before their turn came. */
  cancelsInLine = 0;
  /** Jobs that held a sequence, were replayed and succeeded, letting it go on. */
  replaysReleased = 0;
  private readonly lines = new Map<string, Line>();
  private readonly places = new Map<string, Place>();
  /** The latest row of every job: a job's insert comes before the enqueue that says it is sequenced. */
  private readonly rows = new Map<string, RowView>();
  private readonly blocking = new Set<string>();
  private readonly replayed = new Set<string>();

  onEvent(event: SimEvent): void {
    if (event.type === 'write') this.onWrite(event);
    else if (event.type === 'call' && event.op === 'jobEnqueueMany' && event.error === null && Array.isArray(event.result)) this.onEnqueue(event);
  }

  private onEnqueue(call: CallEvent): void {
    const inputs = call.args as readonly LoggedInput[];
    const results = call.result as readonly EnqueueResult[];
    const touched = new Set<Line>();
    inputs.forEach((input, i) => {
      if (input.sequence === undefined || results[i]?.created !== true || this.places.has(input.id)) return;
      const { key } = input.sequence;
      const line = this.lines.get(key) ?? { key, jobs: [], turns: 0 };
      this.lines.set(key, line);
      this.places.set(input.id, { line, index: line.jobs.length, afterFailure: input.sequence.afterFailure ?? 'block' });
      line.jobs.push(input.id);
      touched.add(line);
    });
    for (const line of touched) this.advance(line);
  }

  private onWrite({ at, before, after }: WriteEvent): void {
    this.rows.set(after.id, after);
    const place = this.places.get(after.id);
    if (place === undefined) return;
    const { line, index } = place;
    if (after.state === 'running' && (before?.state !== 'running' || before.attempt !== after.attempt)) this.checkStart(after, place, at);
    if (before !== undefined && isDeadLetterState(before.state) && after.state === 'scheduled') this.replayed.add(after.id);
    if (after.state === 'cancelled' && before !== undefined && !TERMINAL.has(before.state) && index >= line.turns) this.cancelsInLine += 1;
    this.advance(line);
  }

  /** Whether a sequenced job's turn has come, as this oracle judges it; undefined for a job of no sequence. */
  hasTurn(jobId: string): boolean | undefined {
    const place = this.places.get(jobId);
    return place && place.index < place.line.turns;
  }

  /** Gives each job its turn whose predecessor has had its own and ended, as the next job's mode allows. */
  private advance(line: Line): void {
    if (line.turns === 0 && line.jobs.length > 0) line.turns = 1;
    while (line.turns < line.jobs.length) {
      const previous = line.jobs[line.turns - 1]!;
      const state = this.rows.get(previous)?.state;
      if (state === undefined || !TERMINAL.has(state)) return;
      const failed = isDeadLetterState(state);
      if (failed && this.places.get(line.jobs[line.turns]!)!.afterFailure === 'block') {
        if (!this.blocking.has(previous)) this.blocks += 1;
        this.blocking.add(previous);
        return;
      }
      if (failed) this.continues += 1;
      if (state === 'succeeded' && this.blocking.has(previous) && this.replayed.has(previous)) this.replaysReleased += 1;
      line.turns += 1;
    }
  }

  private checkStart(row: RowView, { line, index }: Place, at: number): void {
    const where = `#${index + 1} of sequence ${line.key}`;
    if (index >= line.turns) {
      const holder = line.jobs[line.turns - 1]!;
      const state = this.rows.get(holder)?.state;
      const next = line.jobs[line.turns]!;
      // The line stops at a job that has not ended, or at one whose failure holds the `block` job after it.
      const why =
        state !== undefined && isDeadLetterState(state)
          ? `${holder} (#${line.turns}) ahead of it was ${state}, which holds ${next === row.id ? 'it' : next} (afterFailure block)`
          : `${holder} (#${line.turns}) ahead of it was ${state ?? 'unknown'}`;
      this.flag(`${row.id} (${where}) started attempt ${row.attempt} before its turn: ${why}`);
    }
    for (const other of line.jobs) {
      if (other === row.id) continue;
      const held = this.rows.get(other);
      if (held?.state === 'running' && held.leasedUntil !== null && held.leasedUntil > at) {
        this.flag(`${row.id} (${where}) started attempt ${row.attempt} while ${other} (#${line.jobs.indexOf(other) + 1}) held a live lease for ${held.leasedUntil - at} ms more`);
      }
    }
  }
}
