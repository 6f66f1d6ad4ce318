import type { SeededRandom } from '../core/index.js';
import type { EnqueueBatchParams, EnqueueInput, Rate, ScheduleInput } from '../store/index.js';
import { planLimitChanges, type LimitChange } from './limit-changes.js';
import { planRateChanges, type RateChange } from './rate-changes.js';
import {
  SIM_BATCH_MAX_JOBS,
  SIM_BROKEN_MAX_MS,
  SIM_DEBOUNCE_MAX_WINDOW_MS,
  SIM_MAX_SNOOZES,
  SIM_SNOOZE_MAX_MS,
  SIM_THROTTLE_MAX_WINDOW_MS,
  SIM_WATCHED_MAX_PARENTS,
  type WorkloadSettings,
} from './sim-settings.js';

/** How a simulated handler behaves, carried in the job's payload. */
export interface SimPayload {
  readonly kind:
    | 'plain'
    | 'flaky'
    | 'poison'
    | 'permanent'
    | 'graph'
    | 'keyed'
    | 'scheduled'
    | 'unique'
    | 'snoozy'
    | 'debounced'
    | 'throttled'
    | 'sequenced'
    | 'batched'
    | 'callback'
    | 'watched'
    | 'watcher'
    | 'batch_handled'
    | 'grouped';
  /** Attempts that throw before one succeeds (flaky and graph jobs; snoozy ones after their snoozes). */
  readonly failTimes: number;
  /** Snoozy jobs: how many times the handler snoozes before it runs on, and for how long each time. */
  readonly snoozeTimes?: number;
  readonly snoozeMs?: number;
  /**
   * Debounced and throttled jobs: the id of the enqueue that sent this payload. A debounce hands
   * its payload to the job that holds its key, so the window oracle can tell which enqueue's
   * payload a job was claimed and run with.
   */
  readonly from?: string;
  /**
   * Sequenced jobs: a downstream that is down for this long after the job was due (its
   * `scheduledFor`): an attempt that starts before then fails for good, so the job is dead-lettered
   * and holds its sequence, and a replay after then succeeds.
   */
  readonly brokenForMs?: number;
}

/** A batch the producer enqueues at one instant (a graph goes in one batch, parents first or children first). */
export interface EnqueueBatch {
  readonly atMs: number;
  readonly inputs: readonly EnqueueInput<SimPayload>[];
  /**
   * Set on a batch with callbacks: the producer writes it with `jobEnqueueBatch` (`inputs` are its
   * jobs, which carry no ids: the store mints them) rather than `jobEnqueueMany`.
   */
  readonly callbacks?: SimBatchCallbacks;
}

/** The callbacks of a simulated batch: a non-empty set of the three. */
export type SimBatchCallbacks = Pick<EnqueueBatchParams, 'onSuccess' | 'onComplete' | 'onFailure'>;

/** Everything a run enqueues and changes, planned up front from the seed. */
export interface Workload {
  readonly batches: readonly EnqueueBatch[];
  readonly schedules: readonly ScheduleInput<SimPayload>[];
  /** Concurrency keys and their caps (every tenant key has the same cap; the hot key its own). */
  readonly caps: ReadonlyMap<string, number>;
  /** The operator's changes of those caps during the safety phase, in time order. */
  readonly limitChanges: readonly LimitChange[];
  /** The rate limit the operator sets on the queue before the run, if any. */
  readonly queueRate: Rate | null;
  /** The operator's changes of the keys' rate limits during the safety phase, in time order. */
  readonly rateChanges: readonly RateChange[];
  /** The ids of the jobs enqueued into sequences, which the operator looks after (sequence-operator.ts). */
  readonly sequenced: ReadonlySet<string>;
}

/** The wire name of every simulated job. */
export const SIM_JOB = 'sim.work';
/** The queue every simulated node claims from. */
export const SIM_QUEUE = 'default';
/** The key of the hot backlog (WorkloadSettings.hotJobs). */
export const HOT_KEY = 'hot';
/** A second wire name, which half the sequenced jobs carry: a sequence runs across wire names. */
export const SIM_STEP_JOB = 'sim.step';
/** The wire name of the batch handler, which takes many of its jobs in one call (WorkloadSettings.batchHandled). */
export const SIM_BATCH_HANDLER_JOB = 'sim.batch';

/**
 * A deterministic 128-bit id from the run's random stream, of any version and variant, as ids from
 * other systems are: job and schedule ids, and the occurrence ids derived from them, must not
 * depend on the bits RFC 9562 reserves.
 */
export function simUuid(r: SeededRandom): string {
  const hex = Array.from({ length: 4 }, () => r.nextUint32().toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A job's priority, from -3 to 3, taken from its id rather than drawn: a draw would shift the random
 * stream, and every seed would run a different workload than before priorities.
 */
export function simPriority(id: string): number {
  return (parseInt(id.slice(-2), 16) % 7) - 3;
}

/**
 * Builds a run's jobs: plain, flaky and poison jobs, small dependency graphs in both modes,
 * concurrency-keyed jobs (which declare their key's rate limit, when the seed has one) and
 * recurring schedules, enqueued in bursts across the safety phase; and, when `limitChanges` or
 * `rateChanges` is given, the operator's changes of the keys' caps or rates.
 */
export function buildWorkload(
  w: WorkloadSettings,
  safetyMs: number,
  r: SeededRandom,
  limitChanges?: { readonly everyMs: number; readonly random: SeededRandom },
  rateChanges?: { readonly everyMs: number; readonly random: SeededRandom },
): Workload {
  const batches: EnqueueBatch[] = [];
  const when = () => (r.next() < 0.4 ? 0 : r.nextInt(Math.floor(safetyMs * 0.8)));
  const job = (kind: SimPayload['kind'], extra: Partial<EnqueueInput<SimPayload>> = {}, failTimes = 0): EnqueueInput<SimPayload> => {
    const id = simUuid(r);
    return { id, name: SIM_JOB, queue: SIM_QUEUE, payload: { kind, failTimes }, maxAttempts: w.maxAttempts, priority: simPriority(id), delayMs: r.next() < 0.2 ? r.nextInt(3000) : 0, ...extra };
  };
  const single = (input: EnqueueInput<SimPayload>) => batches.push({ atMs: when(), inputs: [input] });

  for (let i = 0; i < w.plain; i++) single(job('plain'));
  for (let i = 0; i < w.flaky; i++) single(job('flaky', {}, 1 + r.nextInt(w.maxAttempts - 1)));
  for (let i = 0; i < w.poison; i++) single(job(r.next() < 0.3 ? 'permanent' : 'poison'));
  const keys = Array.from({ length: w.keys }, (_, i) => `tenant-${i}`);
  // The rate is a setting, not a draw here, so the jobs' draws are as they were before rate limits.
  const rateLimit = w.keyRateMax > 0 ? { rateLimit: { max: w.keyRateMax, perMs: w.keyRatePerMs } } : {};
  for (let i = 0; i < w.keyed; i++) {
    single(job('keyed', { concurrencyKey: keys[r.nextInt(keys.length)], concurrencyLimit: w.keyCap, ...rateLimit }, r.next() < 0.3 ? 1 : 0));
  }
  for (let g = 0; g < w.graphs; g++) batches.push({ atMs: when(), inputs: graph(w, r, job) });

  const schedules: ScheduleInput<SimPayload>[] = [];
  for (let i = 0; i < w.schedules; i++) {
    const cron = w.cron && i === 0;
    schedules.push({
      id: simUuid(r),
      name: SIM_JOB,
      queue: SIM_QUEUE,
      payload: { kind: 'scheduled', failTimes: 0 },
      maxAttempts: w.maxAttempts,
      ...(cron ? { cron: `*/${2 + r.nextInt(3)} * * * * *` } : { everyMs: 1000 * (1 + r.nextInt(4)) }),
      noOverlap: r.next() < 0.3,
      catchUp: r.next() < 0.5 ? 'skip' : 'coalesce',
      misfireGraceMs: w.misfireGraceMs,
    });
  }
  // Drawn after everything else, so the jobs above do not depend on these draws.
  const uniqueKeys = Array.from({ length: w.uniqueKeys }, (_, i) => `digest-${i}`);
  for (let i = 0; i < w.unique; i++) single(uniqueJob(w, r, uniqueKeys, job));
  // The hot key's backlog, drawn last: urgent, so every claim meets it before any other due job.
  if (w.hotJobs > 0) {
    batches.push({ atMs: 0, inputs: Array.from({ length: w.hotJobs }, () => job('keyed', { concurrencyKey: HOT_KEY, concurrencyLimit: w.hotCap, priority: -3, delayMs: 0 })) });
  }
  // Snoozy jobs, drawn after all of the above, so the jobs before them are as they were.
  for (let i = 0; i < w.snoozy; i++) {
    const snoozeTimes = 1 + r.nextInt(SIM_MAX_SNOOZES + 1);
    const base = job('snoozy', {}, r.nextInt(w.maxAttempts));
    single({ ...base, payload: { ...base.payload, snoozeTimes, snoozeMs: r.nextInt(SIM_SNOOZE_MAX_MS + 1) } });
  }
  // Debounced and throttled enqueues, drawn after all of the above, so a seed draws the same jobs
  // before them whether or not it has windows.
  const windowKeys = Array.from({ length: w.windowKeys }, (_, i) => `window-${i}`);
  if (w.debounced > 0) batches.push(...windowBursts('debounced', w.debounced, windowKeys, w, safetyMs, r, job));
  if (w.throttled > 0) batches.push(...windowBursts('throttled', w.throttled, windowKeys, w, safetyMs, r, job));
  // Sequenced jobs, drawn last, for the same reason.
  const sequenceKeys = Array.from({ length: w.sequenceKeys }, (_, i) => `seq-${i}`);
  const sequenced = w.sequenced > 0 ? sequenceBursts(w, sequenceKeys, safetyMs, r, job) : [];
  batches.push(...sequenced);
  // Batches with callbacks and on_failure dependants, drawn last of all, for the same reason.
  for (let i = 0; i < w.batches; i++) batches.push(callbackBatch(w, safetyMs, r, job));
  for (let i = 0; i < w.failureWatchers; i++) batches.push(...failureWatch(w, safetyMs, r, job));
  // The batch handler's jobs, drawn after all of the above, for the same reason.
  if (w.batchHandled > 0) batches.push(...batchHandlerBursts(w.batchHandled, safetyMs, r, job));
  // Grouped jobs, drawn after all of the above, for the same reason.
  if (w.grouped > 0) batches.push(...groupedJobs(w, safetyMs, r, job));
  batches.sort((a, b) => a.atMs - b.atMs);
  const changes = limitChanges ? planLimitChanges(keys, safetyMs, limitChanges.everyMs, limitChanges.random) : [];
  return {
    batches,
    schedules,
    caps: new Map([...keys.map((key): [string, number] => [key, w.keyCap]), ...(w.hotJobs > 0 ? [[HOT_KEY, w.hotCap] as [string, number]] : [])]),
    limitChanges: changes,
    queueRate: w.queueRateMax > 0 ? { max: w.queueRateMax, perMs: w.queueRatePerMs } : null,
    rateChanges: rateChanges ? planRateChanges(keys, safetyMs, rateChanges.everyMs, rateChanges.random) : [],
    sequenced: new Set(sequenced.flatMap((batch) => batch.inputs.map((input) => input.id!))),
  };
}

/** A chain, fan-out or fan-in of 2 to 6 jobs; some parents fail for good, to cascade. */
function graph(
  w: WorkloadSettings,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueInput<SimPayload>[] {
  const size = 2 + r.nextInt(5);
  const nodes: EnqueueInput<SimPayload>[] = [];
  for (let i = 0; i < size; i++) {
    const parents = nodes.filter(() => r.next() < 0.5).map((n) => n.id!);
    if (i > 0 && parents.length === 0) parents.push(nodes[r.nextInt(nodes.length)]!.id!);
    const failsForGood = r.next() < 0.15;
    nodes.push(
      job(failsForGood ? 'poison' : 'graph', i === 0 ? {} : { dependsOn: parents, dependencyMode: r.next() < 0.3 ? 'on_any_terminal' : 'on_success', delayMs: 0 }, failsForGood ? 0 : r.nextInt(w.maxAttempts)),
    );
  }
  // A batch is planned as a whole, in any order: half the graphs list children before parents.
  return r.next() < 0.5 ? nodes.reverse() : nodes;
}

/** How one key's debounced or throttled enqueues open their window (each key keeps its own all run). */
interface WindowPlan {
  readonly windowMs: number;
  /** A debounce's `maxDelayMs`: one to three windows, or absent for the store's default (ten). */
  readonly maxDelayMs?: number;
}

/**
 * `count` enqueues that carry a debounce or a throttle window, in bursts of two to six under one
 * key each: an enqueue follows the one before it by up to one and a half windows, so some find the
 * window open and some find it closed, and a debounce whose `maxDelayMs` is short meets its cap.
 * Now and then two enqueues of a burst go in one batch. Bursts begin anywhere in the first 80 % of
 * the safety phase and end by then. Some of their jobs fail for good, so the operator may replay
 * them while their key has another job.
 */
function windowBursts(
  kind: 'debounced' | 'throttled',
  count: number,
  keys: readonly string[],
  w: WorkloadSettings,
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch[] {
  const plans: WindowPlan[] = keys.map(() => {
    if (kind === 'throttled') return { windowMs: 500 * (2 + r.nextInt(SIM_THROTTLE_MAX_WINDOW_MS / 500 - 1)) };
    const windowMs = 250 * (1 + r.nextInt(SIM_DEBOUNCE_MAX_WINDOW_MS / 250));
    const windows = r.nextInt(4);
    return windows === 0 ? { windowMs } : { windowMs, maxDelayMs: windows * windowMs };
  });
  const end = Math.floor(safetyMs * 0.8);
  const input = (k: number): EnqueueInput<SimPayload> => {
    const roll = r.next();
    const failTimes = roll < 0.15 ? w.maxAttempts : roll < 0.4 ? 1 + r.nextInt(w.maxAttempts - 1) : 0;
    const { delayMs, ...base } = job(kind, {}, failTimes);
    const key = keys[k]!;
    const plan = plans[k]!;
    const payload = { ...base.payload, from: base.id! };
    // A debounced job's run time is its window's: it takes no delay of its own.
    if (kind === 'debounced') return { ...base, payload, debounce: { key, ...plan } };
    return { ...base, delayMs, payload, throttle: { key, windowMs: plan.windowMs } };
  };
  const batches: EnqueueBatch[] = [];
  for (let left = count; left > 0; ) {
    const k = r.nextInt(keys.length);
    const size = Math.min(left, 2 + r.nextInt(5));
    let at = r.nextInt(end);
    for (let i = 0; i < size; ) {
      const pair = i + 1 < size && r.next() < 0.2;
      batches.push({ atMs: Math.min(at, end), inputs: pair ? [input(k), input(k)] : [input(k)] });
      i += pair ? 2 : 1;
      at += r.nextInt(Math.floor(plans[k]!.windowMs * 1.5) + 1);
    }
    left -= size;
  }
  return batches;
}

/**
 * The jobs enqueued into sequences (`w.sequenced`), in bursts of two to six under one key each, an enqueue up
 * to a second and a half after the one before it, so most find the job before them unfinished; now
 * and then two of a burst share a batch, which chains them in batch order. A third run on past a
 * failure (`afterFailure: 'continue'`), the rest block, half of those by default. Some fail until
 * their attempts run out (a replay fails again: only a discard lets their sequence go on), some
 * fail for good while their downstream is broken (a replay after that succeeds), some fail a few
 * times and then succeed; some are delayed, so a job due before the one ahead of it must still wait.
 * Half carry another wire name. Bursts begin anywhere in the first 80 % of the safety phase.
 */
function sequenceBursts(
  w: WorkloadSettings,
  keys: readonly string[],
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch[] {
  const end = Math.floor(safetyMs * 0.8);
  const input = (key: string): EnqueueInput<SimPayload> => {
    const roll = r.next();
    const failTimes = roll < 0.15 ? w.maxAttempts : roll < 0.4 ? 1 + r.nextInt(w.maxAttempts - 1) : 0;
    const mode = r.next();
    const sequence = mode < 0.35 ? { key, afterFailure: 'continue' as const } : mode < 0.7 ? { key, afterFailure: 'block' as const } : { key };
    const name = r.next() < 0.5 ? SIM_STEP_JOB : SIM_JOB;
    const base = job('sequenced', { name, sequence }, failTimes);
    if (roll < 0.15 || roll >= 0.35) return base;
    // Broken for a while after it is due, and flaky once the downstream is back.
    return { ...base, payload: { ...base.payload, brokenForMs: 500 + r.nextInt(SIM_BROKEN_MAX_MS - 499) } };
  };
  const batches: EnqueueBatch[] = [];
  for (let left = w.sequenced; left > 0; ) {
    const key = keys[r.nextInt(keys.length)]!;
    const size = Math.min(left, 2 + r.nextInt(5));
    let at = r.nextInt(end);
    for (let i = 0; i < size; ) {
      const pair = i + 1 < size && r.next() < 0.2;
      batches.push({ atMs: Math.min(at, end), inputs: pair ? [input(key), input(key)] : [input(key)] });
      i += pair ? 2 : 1;
      at += r.nextInt(1_501);
    }
    left -= size;
  }
  return batches;
}

/** failTimes for a job of a batch or a watched parent: a quarter fail for good, a quarter a few times, the rest never. */
function failTimesOf(w: WorkloadSettings, r: SeededRandom): number {
  const roll = r.next();
  return roll < 0.25 ? w.maxAttempts : roll < 0.5 ? 1 + r.nextInt(w.maxAttempts - 1) : 0;
}

/**
 * A batch of 1 to {@link SIM_BATCH_MAX_JOBS} jobs for `jobEnqueueBatch`, with a random non-empty
 * set of its three callbacks. A quarter of its jobs fail until their attempts run out (some of
 * those throw `PermanentJobError` at once), a quarter fail a few times and then succeed, so about
 * half the batches end with a failure; the callbacks now and then fail once. A batch's jobs carry
 * no ids (the store mints them, and the batch id) but may be delayed; the callbacks are not.
 */
function callbackBatch(
  w: WorkloadSettings,
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch {
  const atMs = r.nextInt(Math.floor(safetyMs * 0.8));
  const anonymous = ({ id: _minted, ...input }: EnqueueInput<SimPayload>): EnqueueInput<SimPayload> => input;
  const inputs = Array.from({ length: 1 + r.nextInt(SIM_BATCH_MAX_JOBS) }, () => {
    const failTimes = failTimesOf(w, r);
    const permanent = failTimes === w.maxAttempts && r.next() < 0.3;
    return anonymous(job(permanent ? 'permanent' : 'batched', {}, failTimes));
  });
  // Each of the seven non-empty sets of callbacks alike.
  const set = 1 + r.nextInt(7);
  const callback = () => anonymous(job('callback', { delayMs: 0 }, r.next() < 0.2 ? 1 : 0));
  const callbacks: { -readonly [K in keyof SimBatchCallbacks]: SimBatchCallbacks[K] } = {};
  if (set & 1) callbacks.onSuccess = callback();
  if (set & 2) callbacks.onComplete = callback();
  if (set & 4) callbacks.onFailure = callback();
  return { atMs, inputs, callbacks };
}

/**
 * One to {@link SIM_WATCHED_MAX_PARENTS} plain jobs (failing as a batch's do) and a dependant of
 * theirs in mode `on_failure`, enqueued with `jobEnqueueMany`: with its parents, in one batch (either
 * order), two times in three; otherwise 0.5 to 6 s after them, when some or all may have ended, so the store
 * decides at the insert (cancelled when every parent succeeded, due when one did not).
 */
function failureWatch(
  w: WorkloadSettings,
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch[] {
  // Begun in the first 60 % of the safety phase, so a late dependant (up to 6 s after) is too.
  const atMs = r.nextInt(Math.floor(safetyMs * 0.6));
  const parents = Array.from({ length: 1 + r.nextInt(SIM_WATCHED_MAX_PARENTS) }, () => job('watched', {}, failTimesOf(w, r)));
  const watcher = job('watcher', { dependsOn: parents.map((parent) => parent.id!), dependencyMode: 'on_failure', delayMs: 0 }, r.next() < 0.2 ? 1 : 0);
  if (r.next() < 2 / 3) return [{ atMs, inputs: r.next() < 0.5 ? [...parents, watcher] : [watcher, ...parents] }];
  // Later than any latency (at most 400 ms), so the parents are stored when it arrives.
  return [{ atMs, inputs: parents }, { atMs: atMs + 500 + r.nextInt(5_501), inputs: [watcher] }];
}

/**
 * `count` jobs of the batch handler's wire name, in bursts of one to six enqueued together at a
 * random time in the first 80 % of the safety phase, so the handler's calls find several due at
 * once; a fifth are delayed (up to 3 s, as any job), so others trickle in while a batch waits to
 * fill. Their handler decides each job's end when it runs (sim-batch-handler.ts), so the payload
 * plans nothing.
 */
function batchHandlerBursts(
  count: number,
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch[] {
  const bursts: EnqueueBatch[] = [];
  for (let left = count; left > 0; ) {
    const size = Math.min(left, 1 + r.nextInt(6));
    const atMs = r.nextInt(Math.floor(safetyMs * 0.8));
    bursts.push({ atMs, inputs: Array.from({ length: size }, () => job('batch_handled', { name: SIM_BATCH_HANDLER_JOB })) });
    left -= size;
  }
  return bursts;
}

/**
 * A job enqueued under one of a few unique keys, in mode keep or replace, so enqueues collide with
 * holders in every state; some fail for good (to be replayed while the key may be taken) and some
 * carry a retry override of their own.
 */
function uniqueJob(
  w: WorkloadSettings,
  r: SeededRandom,
  keys: readonly string[],
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueInput<SimPayload> {
  const roll = r.next();
  const extra: Partial<EnqueueInput<SimPayload>> = {
    uniqueKey: keys[r.nextInt(keys.length)],
    uniqueKeyMode: r.next() < 0.5 ? 'replace' : 'keep',
    ...(r.next() < 0.3 ? { retry: { baseDelayMs: 0 } } : {}),
  };
  if (roll < 0.2) return job('poison', extra);
  return job('unique', extra, roll < 0.5 ? 1 + r.nextInt(w.maxAttempts - 1) : 0);
}

/** The key space of the simulated groups, apart from every concurrency key (no limit ever applies to a group). */
export const SIM_GROUP_PREFIX = 'group-';

/**
 * The grouped jobs (`w.grouped`): three in four are the first group's backlog, enqueued due at the
 * start in one batch; the rest belong to the other groups and arrive one at a time through the run.
 */
function groupedJobs(
  w: WorkloadSettings,
  safetyMs: number,
  r: SeededRandom,
  job: (kind: SimPayload['kind'], extra?: Partial<EnqueueInput<SimPayload>>, failTimes?: number) => EnqueueInput<SimPayload>,
): EnqueueBatch[] {
  const backlog = Math.ceil(w.grouped * 0.75);
  const out: EnqueueBatch[] = [{ atMs: 0, inputs: Array.from({ length: backlog }, () => job('grouped', { group: `${SIM_GROUP_PREFIX}0`, delayMs: 0 }, r.next() < 0.2 ? 1 : 0)) }];
  for (let i = backlog; i < w.grouped; i++) {
    const group = `${SIM_GROUP_PREFIX}${1 + r.nextInt(Math.max(1, w.groups - 1))}`;
    out.push({ atMs: r.nextInt(Math.floor(safetyMs * 0.8)), inputs: [job('grouped', { group }, r.next() < 0.2 ? 1 : 0)] });
  }
  return out;
}
