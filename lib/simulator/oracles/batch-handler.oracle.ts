import type { BatchCallEnd, BatchCallStart, RowView, SimEvent } from '../sim-event.js';
import { SIM_BATCH_HANDLER_JOB } from '../workload.js';
import { PerCallOracle, workerOf, type CallEvent, type WriteEvent } from './oracle.js';

/** A lease the store gave a node: a claim (or a lapsed lease's reclaim) of one attempt of a job. */
interface Claim {
  readonly attempt: number;
  readonly workerId: string;
  /** A call of the batch handler ran it: no second call may. */
  ran: boolean;
}

/** One job of one call, and, once the call ended, what the handler decided for it. */
interface Run {
  readonly call: string;
  /** How many jobs the call held. */
  readonly of: number;
  end?: { readonly failed: boolean; readonly threw: boolean };
}

const key = (jobId: string, attempt: number, workerId: string) => `${jobId}:${attempt}:${workerId}`;

/**
 * A batch handler's calls hold what they may, and each job's outcome is what the handler decided
 * for that job alone (docs/batch-handlers: one failure retries that job alone):
 *
 * - a call holds 1 to `size` jobs (the size its handler declared), all of its wire name (as the job's
 *   context and the stored row name it), each at most once;
 * - each job is held at the attempt a claim gave that node: the store leased that attempt of the job
 *   to that worker, and no earlier call ran that lease. (At the call's start the store's row is that
 *   lease still, or the lease was lost since: reclaimed, lapsed, ended; counted as coverage.)
 * - an outcome a node reports for a job of a batch handler's wire name, and the store applies, is
 *   one for a lease a call of the handler ran and that call has ended: a job the handler failed
 *   (with `fail`, or by throwing from the call) never ends `succeeded` from that attempt, and a job
 *   it did not fail, in a call that returned, ends `succeeded` from it and nothing else (a report
 *   the store refused as stale writes nothing, so a lost lease passes).
 *
 * Calls of two or more jobs, failures applied to a job failed alone in a call that returned, and
 * failures applied to jobs of a call that threw are counted as coverage.
 */
export class BatchHandlerOracle extends PerCallOracle {
  readonly name = 'batch_handler_calls';
  /** Calls that began with two jobs or more. */
  sharedCalls = 0;
  /** Jobs the handler failed with `fail` in a call of several that returned, whose failure the store applied. */
  failedAlone = 0;
  /** Jobs of a call that threw, not failed on their own, whose failure the store applied. */
  thrownFailures = 0;
  /** Jobs whose lease was lost (or had lapsed) between their claim and their call's start. */
  lostBeforeCall = 0;

  private readonly rows = new Map<string, RowView>();
  private readonly claims = new Map<string, Claim[]>();
  private readonly runs = new Map<string, Run>();
  /** The runs of each call that has started and not ended, by call. */
  private readonly open = new Map<string, Map<string, Run>>();

  constructor(private readonly names: ReadonlySet<string> = new Set([SIM_BATCH_HANDLER_JOB])) {
    super();
  }

  override onEvent(event: SimEvent): void {
    if (event.type === 'write') this.noteWrite(event);
    else if (event.type === 'batch_call') {
      if (event.phase === 'start') this.onStart(event);
      else this.onEnd(event);
    }
    super.onEvent(event);
  }

  private noteWrite({ before, after }: WriteEvent): void {
    this.rows.set(after.id, after);
    const sameLease = before?.state === 'running' && before.attempt === after.attempt && before.workerId === after.workerId;
    if (after.state !== 'running' || after.workerId === null || sameLease) return;
    const claims = this.claims.get(after.id) ?? [];
    claims.push({ attempt: after.attempt, workerId: after.workerId, ran: false });
    this.claims.set(after.id, claims);
  }

  private onStart(event: BatchCallStart): void {
    const { call, workerId, name, size, jobs, at } = event;
    const label = `call ${call} of ${name}`;
    if (!this.names.has(name)) this.flag(`${label}: no batch handler has that wire name`);
    if (jobs.length < 1 || jobs.length > size) this.flag(`${label} held ${jobs.length} jobs; its handler takes 1 to ${size}`);
    if (jobs.length > 1) this.sharedCalls += 1;
    const runs = new Map<string, Run>();
    for (const job of jobs) {
      if (runs.has(job.jobId)) {
        this.flag(`${label} held ${job.jobId} twice`);
        continue;
      }
      const row = this.rows.get(job.jobId);
      if (job.name !== name || (row !== undefined && row.name !== name)) this.flag(`${label} held ${job.jobId}, of wire name ${row?.name ?? job.name}`);
      const claim = this.claims.get(job.jobId)?.findLast((c) => c.attempt === job.attempt && c.workerId === workerId);
      if (claim === undefined) {
        const stored = row === undefined ? 'not stored' : `${row.state}, attempt ${row.attempt} under ${row.workerId}`;
        this.flag(`${label} held ${job.jobId} attempt ${job.attempt}, which no claim leased to ${workerId} (the store has it ${stored})`);
      } else if (claim.ran) this.flag(`${label} ran ${job.jobId} attempt ${job.attempt}, which an earlier call on ${workerId} had run`);
      else {
        claim.ran = true;
        const held = row !== undefined && row.state === 'running' && row.workerId === workerId && row.attempt === job.attempt && (row.leasedUntil ?? 0) > at;
        if (!held) this.lostBeforeCall += 1;
      }
      const run: Run = { call, of: jobs.length };
      runs.set(job.jobId, run);
      this.runs.set(key(job.jobId, job.attempt, workerId), run);
    }
    this.open.set(call, runs);
  }

  private onEnd({ call, failed, threw }: BatchCallEnd): void {
    const runs = this.open.get(call);
    if (runs === undefined) return this.flag(`call ${call} ended without having started`);
    this.open.delete(call);
    for (const jobId of failed) if (!runs.has(jobId)) this.flag(`call ${call} failed ${jobId}, which it did not hold`);
    const failedSet = new Set(failed);
    for (const [jobId, run] of runs) run.end = { failed: failedSet.has(jobId), threw };
  }

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    if (call.op !== 'jobCompleteMany' || call.error !== null) return;
    const reporter = workerOf(call);
    const outcomes = (call.args as { outcomes?: readonly { jobId: string; attempt: number; kind: string }[] }).outcomes ?? [];
    for (const { before, after } of writes) {
      if (before?.state !== 'running' || before.workerId !== reporter || !this.names.has(before.name)) continue;
      const outcome = outcomes.find((o) => o.jobId === before.id && o.attempt === before.attempt);
      if (outcome === undefined) continue;
      const label = `${reporter}'s ${outcome.kind} report of ${before.id} attempt ${before.attempt}`;
      const run = this.runs.get(key(before.id, before.attempt, reporter!));
      if (run === undefined) {
        this.flag(`${label} was applied (${after.state}), but no call of the batch handler ran that attempt`);
        continue;
      }
      if (run.end === undefined) {
        this.flag(`${label} was applied (${after.state}) before its call ${run.call} ended`);
        continue;
      }
      const { failed, threw } = run.end;
      const succeeded = after.state === 'succeeded';
      if ((failed || threw) && succeeded) {
        this.flag(`${label} ended it succeeded, but call ${run.call} ${failed ? 'failed it' : 'threw'}`);
      } else if (!failed && !threw && !succeeded) {
        this.flag(`${label} left it ${after.state} (${after.lastError ?? 'no error'}), but call ${run.call} returned without failing it`);
      } else if (!succeeded && failed && !threw && run.of > 1) this.failedAlone += 1;
      else if (!succeeded && threw && !failed) this.thrownFailures += 1;
    }
  }
}
