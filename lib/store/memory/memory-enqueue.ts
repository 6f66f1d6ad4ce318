import { newRateWindow } from '../rate-window.js';
import type { JobState } from '../../core/index.js';
import { assertAcyclic, parentsToLookUp, planDependencies } from '../dependencies/dependency-plan.js';
import type { NewJob } from '../enqueue-input.js';
import { chainSequences, hasSequences, sequenceKeys, type ChainedBatch } from '../dependencies/sequence-chain.js';
import type { JobRow } from '../job-row.js';
import type { EnqueueResult } from '../job-store.types.js';
import { enqueueResults, hasKeys, planUnique, type UniqueReplace } from '../unique/unique-plan.js';
import type { MemoryLifecycle } from './memory-lifecycle.js';
import type { MemoryState } from './memory-tables.js';
import { memoryHolders } from './memory-unique.js';

/** Writes new jobs: their rows, dependency edges, declared limits and unique-key outcomes. */
export class MemoryEnqueue {
  constructor(
    private readonly state: MemoryState,
    private readonly life: MemoryLifecycle,
    /** False writes every job as if no unique key were held (the sabotage self-test only). */
    private readonly enforceUniqueKeys: boolean,
  ) {}

  enqueueMany(given: readonly NewJob[]): EnqueueResult[] {
    const { tables } = this.state;
    const chained = hasSequences(given) ? this.chain(given) : null;
    const jobs = chained?.jobs ?? given;
    const results = this.write(jobs);
    // Only once the batch is written: a refused batch leaves every sequence's tail as it was.
    for (const [key, tail] of chained?.tails ?? []) tables.sequences.set(key, tail);
    return results;
  }

  /** Points each sequenced job at the job it runs after: its sequence's tail, or the one before it in the batch. */
  private chain(jobs: readonly NewJob[]): ChainedBatch {
    const { tables } = this.state;
    const tails = new Map(sequenceKeys(jobs).map((key) => [key, tables.sequences.get(key) ?? null]));
    return chainSequences(jobs, tails, new Set(jobs.filter((job) => tables.jobs.has(job.id)).map((job) => job.id)));
  }

  private write(jobs: readonly NewJob[]): EnqueueResult[] {
    const { tables } = this.state;
    if (this.enforceUniqueKeys && hasKeys(jobs)) {
      assertAcyclic(jobs);
      const plan = planUnique(jobs.filter((job) => !tables.jobs.has(job.id)), memoryHolders(tables.jobs.values(), jobs, this.state.clock.now()));
      const created = this.insertJobs(plan.insert);
      // The look-up and the rewrite see the same rows, so every debounce rewrite applies.
      return enqueueResults(jobs, created, plan, new Set(plan.replace.map((op) => this.rewriteHolder(op))));
    }
    const created = this.insertJobs(jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  /** Inserts the jobs whose ids are new and sends one wake hint per queue that got a due job. */
  insertJobs(jobs: readonly NewJob[]): Set<string> {
    const { tables, clock, probe, hints } = this.state;
    const now = clock.now();
    // The whole batch is planned (and checked) as written; a job whose id exists writes nothing.
    const lookUp = parentsToLookUp(jobs);
    const plans = planDependencies(jobs, this.storedStates(lookUp), new Set(lookUp.filter((id) => this.life.inLine(id)))).filter((plan) => !tables.jobs.has(plan.job.id));
    const created = new Set<string>();
    const due = new Set<string>();
    for (const { job, state, pendingParents, lastError, parentFailed, edges } of plans) {
      const runAt = job.runAt ?? now + job.delayMs;
      const row: JobRow = {
        id: job.id,
        seq: tables.nextSeq++,
        name: job.name,
        queue: job.queue,
        payload: job.payload,
        state,
        runAt,
        scheduledFor: runAt,
        priority: job.priority ?? 0,
        scheduleId: job.scheduleId ?? null,
        pendingParents,
        dependencyMode: job.dependencyMode ?? null,
        concurrencyKey: job.concurrencyKey ?? null,
        groupKey: job.group ?? null,
        uniqueKey: job.uniqueKey ?? null,
        windowKind: job.window?.kind ?? null,
        windowKey: job.window?.key ?? null,
        windowEndsAt: job.window ? now + job.window.endsInMs : null,
        sequenceKey: job.sequence?.key ?? null,
        sequenceMode: job.sequence?.afterFailure ?? null,
        batchId: job.batchId ?? null,
        batchCallback: job.batchCallback ?? null,
        parentFailed,
        retry: job.retry ?? null,
        traceparent: job.traceparent ?? null,
        tracestate: job.tracestate ?? null,
        attempt: 0,
        maxAttempts: job.maxAttempts,
        snoozes: 0,
        workerId: null,
        leasedUntil: null,
        cancelRequested: false,
        lastError,
        output: null,
        progress: null,
        createdAt: now,
        updatedAt: now,
        finishedAt: state === 'cancelled' ? now : null,
      };
      tables.jobs.set(job.id, row);
      probe.rowWritten?.(undefined, row);
      this.life.record(row, row.lastError);
      for (const edge of edges) {
        const list = tables.children.get(edge.parentId) ?? [];
        list.push(edge.sequence === undefined ? { childId: job.id, settled: edge.settled } : { childId: job.id, settled: edge.settled, sequence: edge.sequence });
        tables.children.set(edge.parentId, list);
      }
      if (edges.length > 0) tables.parents.set(job.id, edges.map((e) => e.parentId));
      const declared = `key:${job.concurrencyKey}`;
      // A declared limit is audited like a set one: verify reads a limit's history from the audit log.
      const audit = (action: string, detail: Record<string, unknown>) =>
        tables.auditLog.push({ id: tables.nextAuditId++, at: new Date(now), actor: 'enqueue', action, target: declared, detail });
      if (job.concurrencyKey && job.concurrencyLimit && !tables.concurrencyLimits.has(declared)) {
        tables.concurrencyLimits.set(declared, job.concurrencyLimit);
        audit('limit.declare', { max: job.concurrencyLimit });
      }
      if (job.concurrencyKey && job.rateLimit && !tables.rateLimits.has(declared)) {
        tables.rateLimits.set(declared, newRateWindow(job.rateLimit));
        audit('rate_limit.declare', { rate: { max: job.rateLimit.max, perMs: job.rateLimit.perMs } });
      }
      if (state === 'scheduled' && runAt <= now) due.add(job.queue);
      created.add(job.id);
    }
    for (const queue of due) hints.emit(queue);
    return created;
  }

  /**
   * Gives a holder that has not started (planUnique checked) a new payload and run time; a
   * debounced holder's run time is capped by its window's end.
   */
  private rewriteHolder(op: UniqueReplace): string {
    const { tables, clock, probe, hints } = this.state;
    const now = clock.now();
    const row = tables.jobs.get(op.id)!;
    const wanted = op.runAt ?? now + op.delayMs;
    const runAt = row.windowEndsAt === null ? wanted : Math.min(wanted, row.windowEndsAt);
    const rewritten: JobRow = { ...row, payload: op.payload, runAt, scheduledFor: runAt, updatedAt: now };
    tables.jobs.set(row.id, rewritten);
    probe.rowWritten?.(row, rewritten);
    if (rewritten.state === 'scheduled' && runAt <= now) hints.emit(rewritten.queue);
    return row.id;
  }

  private storedStates(ids: readonly string[]): Map<string, JobState> {
    const { jobs } = this.state.tables;
    return new Map(ids.flatMap((id) => (jobs.has(id) ? [[id, jobs.get(id)!.state] as const] : [])));
  }
}
