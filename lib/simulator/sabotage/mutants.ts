import { LIFECYCLE_RULES, type JobEvent, type LifecycleFields, type LifecycleRules, type Transition } from '../../core/index.js';
import type { MemoryJobStore } from '../../store/index.js';
import type { MemoryTables } from '../../store/memory/memory-tables.js';
import { claimOrder } from '../../store/job-row.js';
import type { JobInvoker } from '../../worker/index.js';

/**
 * Deliberately broken lifecycle rules for the sabotage self-test. Each one removes or bends a
 * single guard the real rules keep; the self-test runs the simulator with it and requires the
 * named oracle to count at least one violation within the seed budget. Never used outside it.
 */
export interface Mutant {
  readonly name: MutantName;
  readonly description: string;
  /** The oracle that must catch it. */
  readonly caughtBy: string;
  readonly rules: LifecycleRules;
  /** Set for a breach outside the lifecycle rules: the store writes a job whose unique key is held. */
  readonly ignoresUniqueKeys?: boolean;
  /** Breaks the store itself, for a guard that lives in the store rather than in the rules. */
  readonly sabotageStore?: (store: MemoryJobStore) => void;
  /**
   * Wraps each node's invoker, for a guard that lives in the worker's batch layer: the simulator
   * hands the node the wrapped invoker, so the worker's own code stays as it ships.
   */
  readonly sabotageInvoker?: (invoker: JobInvoker) => JobInvoker;
}

/** The deliberately broken variants the sabotage self-test runs. */
export type MutantName =
  | 'no_fence'
  | 'heartbeat_renews_unheld'
  | 'slot_released_early'
  | 'latch_on_stale_write'
  | 'max_attempts_off_by_one'
  | 'reclaim_without_state_check'
  | 'unique_key_ignored'
  | 'limit_change_forgets_running'
  | 'priority_ignored'
  | 'groups_ignored'
  | 'rate_limit_ignored'
  | 'progress_unfenced'
  | 'snooze_spends_attempt'
  | 'claim_window'
  | 'throttle_ignores_window'
  | 'debounce_keeps_first_payload'
  | 'sequence_ignored'
  | 'sequence_block_ignored'
  | 'on_failure_ignored'
  | 'batch_callback_early'
  | 'batch_failure_spreads'
  | 'batch_oversize';

const real = LIFECYCLE_RULES;
const REPORTS = new Set<JobEvent['kind']>(['succeed', 'fail', 'dead_letter', 'snooze', 'quarantine', 'relinquish']);

/** The job as if `event`'s reporter held its live lease. */
function asIfHeld(job: LifecycleFields, now: number): LifecycleFields {
  return { ...job, leasedUntil: Math.max(job.leasedUntil ?? 0, now + 1) };
}

function withReporter(event: JobEvent, job: LifecycleFields): JobEvent {
  return { ...event, workerId: job.workerId!, attempt: job.attempt } as JobEvent;
}

const noFence: LifecycleRules = {
  ...real,
  transition(job, event, now) {
    if (!REPORTS.has(event.kind) || job.state !== 'running') return real.transition(job, event, now);
    // Any report is taken as coming from the lease holder, live or not.
    return real.transition(asIfHeld(job, now), withReporter(event, job), now);
  },
};

const heartbeatRenewsUnheld: LifecycleRules = {
  ...real,
  transition(job, event, now) {
    if (event.kind !== 'heartbeat' || job.state !== 'running') return real.transition(job, event, now);
    return real.transition(asIfHeld(job, now), withReporter(event, job), now);
  },
};

const slotReleasedEarly: LifecycleRules = {
  ...real,
  transition(job, event, now) {
    const result = real.transition(job, event, now);
    if (event.kind !== 'heartbeat' || !result.ok) return result;
    // Gives the slot back on the first renewal, before any outcome.
    return { ...result, effects: [...result.effects, { type: 'release_slots' }] };
  },
};

const latchOnStaleWrite: LifecycleRules = {
  ...real,
  transition(job, event, now): Transition {
    const result = real.transition(job, event, now);
    if (result.ok || result.rejection !== 'stale_lease' || !REPORTS.has(event.kind)) return result;
    // A refused report still settles the job's dependants.
    return { ok: true, next: job, effects: [{ type: 'settle_dependants' }] };
  },
};

/**
 * A heartbeat from a worker that lost the lease is accepted without renewing it, so the progress
 * it carries is written: the fence is gone from the progress write alone.
 */
const progressUnfenced: LifecycleRules = {
  ...real,
  transition(job, event, now) {
    const result = real.transition(job, event, now);
    if (event.kind !== 'heartbeat' || result.ok || job.state !== 'running') return result;
    return { ok: true, next: job, effects: [] };
  },
};

/** A snooze reschedules the job as a failure would: it counts, but the budget does not grow, so it spends an attempt. */
const snoozeSpendsAttempt: LifecycleRules = {
  ...real,
  transition(job, event, now) {
    const result = real.transition(job, event, now);
    if (event.kind !== 'snooze' || !result.ok || result.next.state !== 'scheduled') return result;
    return { ...result, next: { ...result.next, maxAttempts: job.maxAttempts } };
  },
};

const offByOne = (job: LifecycleFields) => ({ ...job, maxAttempts: job.maxAttempts + 1 });
const maxAttemptsOffByOne: LifecycleRules = {
  transition(job, event, now) {
    if (event.kind !== 'claim') return real.transition(job, event, now);
    const result = real.transition(offByOne(job), event, now);
    return result.ok ? { ...result, next: { ...result.next, maxAttempts: job.maxAttempts } } : result;
  },
  isClaimable: (job, now) => real.isClaimable(offByOne(job), now),
  needsSweep: (job, now) => real.needsSweep(offByOne(job), now),
};

/** Claimable whenever due with budget left, whatever the state: the `state = 'scheduled'` check is gone. */
const claimableWithoutState = (job: LifecycleFields, now: number) =>
  job.attempt < job.maxAttempts && (job.state === 'running' ? real.isClaimable(job, now) : job.runAt <= now);
const reclaimWithoutStateCheck: LifecycleRules = {
  ...real,
  isClaimable: claimableWithoutState,
  transition(job, event, now) {
    if (event.kind !== 'claim' || job.state === 'running' || !claimableWithoutState(job, now)) return real.transition(job, event, now);
    const result = real.transition({ ...job, state: 'scheduled' }, event, now);
    return result;
  },
};

/**
 * A limit change forgets the jobs already running under its key: they stop counting against the
 * new cap, as a limit set at run time would if it got only free slots on PostgreSQL.
 */
function limitChangeForgetsRunning(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const set = store.concurrencyLimitSet.bind(store);
  store.concurrencyLimitSet = async (params) => {
    await set(params);
    const { target } = params;
    for (const row of tables.jobs.values()) {
      const under = 'key' in target ? row.concurrencyKey === target.key : row.queue === target.queue;
      if (row.state === 'running' && under) tables.slotHolders.delete(row.id);
    }
  };
}

/** The claim takes due jobs by run time alone, as if every job had the default priority. */
function priorityIgnored(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const claim = store.jobClaim.bind(store);
  store.jobClaim = async (params) => {
    const kept = new Map<string, number>();
    for (const row of tables.jobs.values()) {
      if (row.state !== 'scheduled' || row.priority === 0) continue;
      kept.set(row.id, row.priority);
      tables.jobs.set(row.id, { ...row, priority: 0 });
    }
    try {
      return await claim(params);
    } finally {
      for (const [id, priority] of kept) tables.jobs.set(id, { ...tables.jobs.get(id)!, priority });
    }
  };
}

/** The claim takes due jobs in claim order alone, as if no job had a group. */
function groupsIgnored(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const claim = store.jobClaim.bind(store);
  store.jobClaim = async (params) => {
    const kept = new Map<string, string>();
    for (const row of tables.jobs.values()) {
      if (row.groupKey === null) continue;
      kept.set(row.id, row.groupKey);
      tables.jobs.set(row.id, { ...row, groupKey: null });
    }
    try {
      return await claim(params);
    } finally {
      for (const [id, groupKey] of kept) tables.jobs.set(id, { ...tables.jobs.get(id)!, groupKey });
    }
  };
}

/** The claim ignores rate limits: it needs no free start and uses none, as if no queue or key had a rate. */
function rateLimitIgnored(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const claim = store.jobClaim.bind(store);
  store.jobClaim = async (params) => {
    const kept = new Map(tables.rateLimits);
    tables.rateLimits.clear();
    try {
      return await claim(params);
    } finally {
      for (const [key, window] of kept) if (!tables.rateLimits.has(key)) tables.rateLimits.set(key, window);
    }
  };
}

/**
 * The claim reads only as many due jobs as it may take, in claim order, and applies the limits to
 * those alone: held-back jobs ahead of the rest use up the read, as the SQL claims did before
 * lanes, so a hot key at its cap starves its queue.
 */
function claimWindow(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const claim = store.jobClaim.bind(store);
  store.jobClaim = async (params) => {
    const now = store.clock.now();
    const asked = new Set(params.queues);
    const due = [...tables.jobs.values()]
      .filter((row) => row.state === 'scheduled' && asked.has(row.queue) && real.isClaimable(row, now))
      .sort(claimOrder);
    // Everything past the window is out of reach for this claim: not yet due, for its duration.
    const beyond = due.slice(params.limit);
    for (const row of beyond) tables.jobs.set(row.id, { ...row, runAt: Number.MAX_SAFE_INTEGER });
    try {
      return await claim(params);
    } finally {
      for (const row of beyond) tables.jobs.set(row.id, { ...tables.jobs.get(row.id)!, runAt: row.runAt });
    }
  };
}

/**
 * An enqueue finds no throttle window open: every window is shut while the store looks its holders
 * up (its end moved to now), then given back, so a throttled enqueue writes a job of its own.
 */
function throttleIgnoresWindow(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const enqueue = store.jobEnqueueMany.bind(store);
  store.jobEnqueueMany = async (params) => {
    const now = store.clock.now();
    const open = new Map<string, number>();
    for (const row of tables.jobs.values()) {
      if (row.windowKind !== 'throttle' || row.windowEndsAt! <= now) continue;
      open.set(row.id, row.windowEndsAt!);
      tables.jobs.set(row.id, { ...row, windowEndsAt: now });
    }
    try {
      return await enqueue(params);
    } finally {
      for (const [id, windowEndsAt] of open) tables.jobs.set(id, { ...tables.jobs.get(id)!, windowEndsAt });
    }
  };
}

/**
 * A debounce pushes its holder's run time but leaves it the payload it had: the payload of the
 * first enqueue (or of the last one before a rewrite that forgot it), not of the last.
 */
function debounceKeepsFirstPayload(store: MemoryJobStore): void {
  const { tables } = store as unknown as { tables: MemoryTables };
  const enqueue = store.jobEnqueueMany.bind(store);
  store.jobEnqueueMany = async (params) => {
    const held = new Map<string, string>();
    for (const row of tables.jobs.values()) {
      if (row.windowKind === 'debounce' && row.state === 'scheduled' && row.attempt === 0) held.set(row.id, row.payload);
    }
    try {
      return await enqueue(params);
    } finally {
      for (const [id, payload] of held) tables.jobs.set(id, { ...tables.jobs.get(id)!, payload });
    }
  };
}

/** An enqueue drops every job's sequence: the jobs of a key run as plain jobs, side by side and in any order. */
function sequenceIgnored(store: MemoryJobStore): void {
  const enqueue = store.jobEnqueueMany.bind(store);
  store.jobEnqueueMany = (params) => enqueue({ ...params, jobs: params.jobs.map(({ sequence: _dropped, ...job }) => job) });
}

/**
 * An enqueue takes every sequenced job as `afterFailure: 'continue'`: a job that should wait behind
 * a failure until an operator replays or discards it runs on at once.
 */
function sequenceBlockIgnored(store: MemoryJobStore): void {
  const enqueue = store.jobEnqueueMany.bind(store);
  store.jobEnqueueMany = (params) =>
    enqueue({ ...params, jobs: params.jobs.map((job) => (job.sequence === undefined ? job : { ...job, sequence: { ...job.sequence, afterFailure: 'continue' } })) });
}

/**
 * An `on_failure` dependant whose last parent ends with none failed is released, as an
 * `on_any_terminal` one would be, instead of cancelled: a batch's onFailure runs when every job
 * succeeded.
 */
const onFailureIgnored: LifecycleRules = {
  ...real,
  transition: (job, event, now) => real.transition(job, event.kind === 'parents_succeeded' ? { kind: 'release' } : event, now),
};

/**
 * A batch callback is due once its latch is down to 1, one job of its batch short, as if the release
 * counted down to 1 rather than 0: the claim takes it while that job has yet to end. The rules read
 * the stored row, which the in-memory store passes whole: its latch and its callback kind.
 */
function oneJobShort(job: LifecycleFields): boolean {
  const row = job as LifecycleFields & { readonly pendingParents?: number; readonly batchCallback?: string | null };
  return job.state === 'awaiting_parents' && row.batchCallback != null && row.pendingParents === 1;
}
const batchCallbackEarly: LifecycleRules = {
  ...real,
  isClaimable: (job, now) => real.isClaimable(oneJobShort(job) ? { ...job, state: 'scheduled' } : job, now),
  transition: (job, event, now) => real.transition(event.kind === 'claim' && oneJobShort(job) ? { ...job, state: 'scheduled' } : job, event, now),
};

/** The invoker as it is, but for what `override` replaces. */
function wrapInvoker(invoker: JobInvoker, override: Partial<JobInvoker>): JobInvoker {
  return {
    definition: (name) => invoker.definition(name),
    invoke: (job, context) => invoker.invoke(job, context),
    ...(invoker.invokeBatch === undefined ? {} : { invokeBatch: (jobs, context) => invoker.invokeBatch!(jobs, context) }),
    ...(invoker.batchHandlers === undefined ? {} : { batchHandlers: () => invoker.batchHandlers!() }),
    ...override,
  };
}

/**
 * A job the batch handler fails takes its whole call down with it: `fail` on one job of a call
 * fails every job of the call with that error, as an executor that kept one failure for the call
 * rather than one per job would.
 */
function batchFailureSpreads(invoker: JobInvoker): JobInvoker {
  return wrapInvoker(invoker, {
    invokeBatch: (jobs, context) => {
      const fails = jobs.map((job) => job.fail.bind(job));
      for (const job of jobs) Object.assign(job, { fail: (error: unknown) => fails.forEach((fail) => fail(error)) });
      return invoker.invokeBatch!(jobs, context);
    },
  });
}

/**
 * The node batches a batch handler's jobs by twice the size the handler declared, as a driver that
 * read the size from the wrong place would: a call may hold more jobs than its handler takes.
 */
function batchOversize(invoker: JobInvoker): JobInvoker {
  const doubled = (batch: { size: number; waitMs: number }) => ({ ...batch, size: 2 * batch.size });
  return wrapInvoker(invoker, {
    definition: (name) => {
      const definition = invoker.definition(name);
      return definition?.batch === undefined ? definition : { ...definition, batch: doubled(definition.batch) };
    },
    batchHandlers: () => new Map([...(invoker.batchHandlers?.() ?? [])].map(([name, batch]) => [name, doubled(batch)])),
  });
}

/** Every mutant, with the oracle that must catch it. */
export const MUTANTS: readonly Mutant[] = [
  { name: 'no_fence', description: 'the outcome write ignores the lease', caughtBy: 'outcome_provenance', rules: noFence },
  { name: 'heartbeat_renews_unheld', description: 'a heartbeat renews a lease its worker does not hold', caughtBy: 'single_live_lease', rules: heartbeatRenewsUnheld },
  { name: 'slot_released_early', description: 'a concurrency slot is given back at the first renewal, before the outcome', caughtBy: 'concurrency_limit', rules: slotReleasedEarly },
  { name: 'latch_on_stale_write', description: 'a refused (stale) report still settles the dependants', caughtBy: 'effects_once', rules: latchOnStaleWrite },
  { name: 'max_attempts_off_by_one', description: 'claim allows one attempt more than maxAttempts', caughtBy: 'attempts_within_budget', rules: maxAttemptsOffByOne },
  { name: 'reclaim_without_state_check', description: 'claim takes any due job whatever its state', caughtBy: 'terminal_state_stable', rules: reclaimWithoutStateCheck },
  { name: 'unique_key_ignored', description: 'enqueue writes a job whose unique key an unfinished job holds', caughtBy: 'one_holder_per_unique_key', rules: real, ignoresUniqueKeys: true },
  {
    name: 'limit_change_forgets_running',
    description: 'a limit set, lowered or raised at run time does not count the jobs already running',
    caughtBy: 'concurrency_limit',
    rules: real,
    sabotageStore: limitChangeForgetsRunning,
  },
  { name: 'priority_ignored', description: 'the claim takes due jobs by run time alone, whatever their priority', caughtBy: 'priority_order', rules: real, sabotageStore: priorityIgnored },
  { name: 'groups_ignored', description: 'the claim takes due jobs in claim order alone, so one group with a backlog starves the rest', caughtBy: 'group_turns', rules: real, sabotageStore: groupsIgnored },
  { name: 'rate_limit_ignored', description: 'the claim ignores rate limits, taking jobs whatever starts their queue or key has left', caughtBy: 'rate_limit', rules: real, sabotageStore: rateLimitIgnored },
  { name: 'progress_unfenced', description: "a stale worker's heartbeat writes its progress", caughtBy: 'progress_provenance', rules: progressUnfenced },
  { name: 'snooze_spends_attempt', description: 'a snooze spends an attempt of the retry budget, as a failure does', caughtBy: 'snooze_keeps_budget', rules: snoozeSpendsAttempt },
  {
    name: 'claim_window',
    description: 'the claim reads only as many due jobs as it may take, so held-back jobs ahead use up the read',
    caughtBy: 'claim_fill',
    rules: real,
    sabotageStore: claimWindow,
  },
  {
    name: 'throttle_ignores_window',
    description: 'an enqueue finds no throttle window open, so every throttled enqueue writes a job of its own',
    caughtBy: 'windows_hold',
    rules: real,
    sabotageStore: throttleIgnoresWindow,
  },
  {
    name: 'debounce_keeps_first_payload',
    description: 'a debounce pushes its job back but leaves it the payload it had, not the last enqueued',
    caughtBy: 'windows_hold',
    rules: real,
    sabotageStore: debounceKeepsFirstPayload,
  },
  { name: 'sequence_ignored', description: 'an enqueue drops the sequence, so the jobs of a key run side by side, in any order', caughtBy: 'sequence_order', rules: real, sabotageStore: sequenceIgnored },
  {
    name: 'sequence_block_ignored',
    description: "every sequenced job runs on past a failure ahead of it, as if its afterFailure were 'continue'",
    caughtBy: 'sequence_order',
    rules: real,
    sabotageStore: sequenceBlockIgnored,
  },
  {
    name: 'on_failure_ignored',
    description: "an on_failure dependant is released when its parents all succeeded, as if its mode were on_any_terminal, so a batch's onFailure runs after a batch that succeeded",
    caughtBy: 'batch_callbacks',
    rules: onFailureIgnored,
  },
  {
    name: 'batch_callback_early',
    description: 'a batch callback is due once its latch is down to 1, so it runs while the last job of its batch has yet to end',
    caughtBy: 'batch_callbacks',
    rules: batchCallbackEarly,
  },
  {
    name: 'batch_failure_spreads',
    description: "a job the batch handler fails fails every job of its call, so one failure retries the whole call's jobs",
    caughtBy: 'batch_handler_calls',
    rules: real,
    sabotageInvoker: batchFailureSpreads,
  },
  {
    name: 'batch_oversize',
    description: 'the node batches a batch handler\'s jobs by twice the size it declared, so a call holds more jobs than its handler takes',
    caughtBy: 'batch_handler_calls',
    rules: real,
    sabotageInvoker: batchOversize,
  },
];

/** The mutant of that name; an unknown name throws, listing the known ones. */
export function mutantNamed(name: string): Mutant {
  const mutant = MUTANTS.find((m) => m.name === name);
  if (!mutant) throw new Error(`No mutant is named "${name}"; choose one of ${MUTANTS.map((m) => m.name).join(', ')}.`);
  return mutant;
}
