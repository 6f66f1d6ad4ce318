import type { JobRecord } from '../core/index.js';
import type {
  BatchSummary,
  BlockedSequence,
  CompleteAndClaimParams,
  CompleteAndClaimResult,
  EnqueueBatchParams,
  EnqueueBatchResult,
  HeartbeatResult,
  MemoryJobStore,
  MemoryStoreProbe,
  OutcomeResult,
} from '../store/index.js';
import type { BatchIds } from './batch-ids.js';
import { errorLine, rowView, type Caller, type EventLog } from './sim-event.js';
import type { VirtualScheduler } from './virtual-scheduler.js';

/** What a store call returned, or the message of what it threw. */
export interface CallResult {
  readonly result: unknown;
  readonly error: Error | null;
}

/**
 * The database side of the simulated network: runs one call at a time against the in-memory store
 * and logs the effects each write had (through the store's probe), then the call itself.
 */
export class StoreGateway {
  constructor(
    private readonly store: MemoryJobStore,
    private readonly log: EventLog,
    private readonly clock: VirtualScheduler,
    /** Seeded ids for the batches the store writes (batch-ids.ts); without it, the store's own. */
    private readonly batchIds?: BatchIds,
  ) {}

  /** The probe to build the store with: each write becomes an event as it happens. */
  static probe(log: EventLog, clock: VirtualScheduler): MemoryStoreProbe {
    return {
      rowWritten: (before, after) => log.emit({ type: 'write', at: clock.now(), before: before && rowView(before), after: rowView(after) }),
      edgeSettled: (parentId, childId) => log.emit({ type: 'edge', at: clock.now(), parentId, childId }),
      historyAppended: (entry) => log.emit({ type: 'log', at: clock.now(), jobId: entry.jobId, state: entry.state, attempt: entry.attempt, error: errorLine(entry.error) }),
      slotTaken: (jobId) => log.emit({ type: 'slot', at: clock.now(), jobId, op: 'take' }),
      slotReleased: (jobId) => log.emit({ type: 'slot', at: clock.now(), jobId, op: 'release' }),
    };
  }

  async execute(caller: Caller, op: string, args: readonly unknown[]): Promise<CallResult> {
    if (op === 'jobCompleteAndClaim') return this.completeAndClaim(caller, args[0] as CompleteAndClaimParams);
    const at = this.clock.now();
    const method = (this.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[op]!;
    let result: unknown;
    let error: Error | null = null;
    try {
      result = await method.apply(this.store, args as unknown[]);
      if (op === 'jobEnqueueBatch' && this.batchIds) result = this.batchIds.result(result as EnqueueBatchResult);
    } catch (thrown) {
      error = toError(thrown);
    }
    this.log.emit({ type: 'call', at, caller, op, args: summarizeArgs(op, args), result: error ? null : summarizeResult(op, result), error: errorText(error) });
    return { result, error };
  }

  /**
   * The outcomes and the claim of one call, run and logged as the two calls they stand for, in the
   * order the store applies them, each after its own writes: the oracles read outcome writes and
   * claims, however they travel. As on a store that sends the two in turn, a claim that fails
   * after the outcomes were written comes back as `claimError`.
   */
  private async completeAndClaim(caller: Caller, { workerId, outcomes, claim }: CompleteAndClaimParams): Promise<CallResult> {
    const complete = await this.execute(caller, 'jobCompleteMany', [{ workerId, outcomes }]);
    if (complete.error) return complete;
    const claimed = await this.execute(caller, 'jobClaim', [{ workerId, ...claim }]);
    const result: CompleteAndClaimResult = claimed.error
      ? { results: complete.result as OutcomeResult[], jobs: [], claimError: claimed.error }
      : { results: complete.result as OutcomeResult[], jobs: claimed.result as JobRecord[] };
    return { result, error: null };
  }
}

function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

function errorText(error: Error | null): string | null {
  return error && `${error.name}: ${error.message}`;
}

/** Calls are logged without payloads: the oracles read ids, attempts and leases. */
function summarizeArgs(op: string, args: readonly unknown[]): unknown {
  const [first] = args;
  if (op === 'jobEnqueueMany') {
    type Input = { id: string; name: string; dependsOn?: string[]; dependencyMode?: string; concurrencyKey?: string; concurrencyLimit?: number; rateLimit?: unknown; debounce?: unknown; throttle?: unknown; sequence?: unknown };
    return (first as { jobs: Input[] }).jobs.map((input) => ({
      id: input.id,
      dependsOn: input.dependsOn ?? [],
      dependencyMode: input.dependencyMode ?? 'on_success',
      concurrencyKey: input.concurrencyKey ?? null,
      concurrencyLimit: input.concurrencyLimit ?? null,
      // Only when declared, so the events of a run without rate limits are as they were.
      ...(input.rateLimit === undefined ? {} : { rateLimit: input.rateLimit }),
      // The same for windows, which the window oracle reads, with the wire name that scopes them.
      ...(input.debounce === undefined ? {} : { name: input.name, debounce: input.debounce }),
      ...(input.throttle === undefined ? {} : { name: input.name, throttle: input.throttle }),
      // And for sequences, which the sequence oracle reads.
      ...(input.sequence === undefined ? {} : { sequence: input.sequence }),
    }));
  }
  if (op === 'jobEnqueueBatch') {
    // The jobs carry no ids (the store mints them): the answer names them, and the callbacks.
    const { jobs, onSuccess, onComplete, onFailure } = first as EnqueueBatchParams;
    return { jobs: jobs.length, callbacks: [onSuccess && 'onSuccess', onComplete && 'onComplete', onFailure && 'onFailure'].filter(Boolean) };
  }
  if (op === 'jobCompleteMany') {
    const { workerId, outcomes } = first as { workerId: string; outcomes: { jobId: string; attempt: number; kind: string; delayMs?: number }[] };
    // A snooze keeps its delay, for the snooze oracle.
    return { workerId, outcomes: outcomes.map(({ jobId, attempt, kind, delayMs }) => (kind === 'snoozed' ? { jobId, attempt, kind, delayMs } : { jobId, attempt, kind })) };
  }
  return args;
}

function summarizeResult(op: string, result: unknown): unknown {
  if (op === 'jobClaim') {
    // A payload from a debounced or throttled enqueue names it (SimPayload.from), for the window oracle.
    return (result as JobRecord[]).map((job) => {
      const from = (job.payload as { from?: unknown } | null)?.from;
      return { jobId: job.id, attempt: job.attempt, leasedUntil: job.leasedUntil!.getTime(), ...(typeof from === 'string' ? { from } : {}) };
    });
  }
  if (op === 'jobHeartbeat') {
    const { renewed, lost } = result as HeartbeatResult;
    return { renewed: renewed.map((l) => ({ jobId: l.jobId, attempt: l.attempt, leasedUntil: l.leasedUntil.getTime() })), lost };
  }
  if (op === 'jobListBlockedSequences') {
    return (result as BlockedSequence[]).map(({ key, job, nextJobId }) => ({ key, jobId: job.id, state: job.state, nextJobId }));
  }
  if (op === 'jobListBatches' || op === 'jobBatch') {
    const summary = ({ id, total, pending, succeeded, failed, cancelled, ended, callbacks }: BatchSummary) => ({ id, total, pending, succeeded, failed, cancelled, ended, callbacks });
    return op === 'jobBatch' ? result && summary(result as BatchSummary) : (result as BatchSummary[]).map(summary);
  }
  if (op === 'jobReplay' || op === 'jobGet') return result && { id: (result as JobRecord).id, state: (result as JobRecord).state };
  if (op === 'jobCancel') return { id: (result as { job: JobRecord }).job.id, outcome: (result as { outcome: string }).outcome };
  if (op === 'scheduleMintDue') {
    const { minted, skipped } = result as { minted: unknown[]; skipped: unknown[] };
    return { minted, skipped };
  }
  return result;
}
