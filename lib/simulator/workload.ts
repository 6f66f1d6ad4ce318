import type { SeededRandom } from '../core/index.js';
import type { EnqueueInput, Rate, ScheduleInput } from '../store/index.js';
import { planLimitChanges, type LimitChange } from './limit-changes.js';
import { planRateChanges, type RateChange } from './rate-changes.js';
import { SIM_MAX_SNOOZES, SIM_SNOOZE_MAX_MS, type WorkloadSettings } from './sim-settings.js';

/** How a simulated handler behaves, carried in the job's payload. */
export interface SimPayload {
  readonly kind: 'plain' | 'flaky' | 'poison' | 'permanent' | 'graph' | 'keyed' | 'scheduled' | 'unique' | 'snoozy';
  /** Attempts that throw before one succeeds (flaky and graph jobs; snoozy ones after their snoozes). */
  readonly failTimes: number;
  /** Snoozy jobs: how many times the handler snoozes before it runs on, and for how long each time. */
  readonly snoozeTimes?: number;
  readonly snoozeMs?: number;
}

/** A batch the producer enqueues at one instant (a graph goes in one batch, parents first or children first). */
export interface EnqueueBatch {
  readonly atMs: number;
  readonly inputs: readonly EnqueueInput<SimPayload>[];
}

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
}

/** The wire name of every simulated job. */
export const SIM_JOB = 'sim.work';
/** The queue every simulated node claims from. */
export const SIM_QUEUE = 'default';
/** The key of the hot backlog (WorkloadSettings.hotJobs). */
export const HOT_KEY = 'hot';

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
  batches.sort((a, b) => a.atMs - b.atMs);
  const changes = limitChanges ? planLimitChanges(keys, safetyMs, limitChanges.everyMs, limitChanges.random) : [];
  return {
    batches,
    schedules,
    caps: new Map([...keys.map((key): [string, number] => [key, w.keyCap]), ...(w.hotJobs > 0 ? [[HOT_KEY, w.hotCap] as [string, number]] : [])]),
    limitChanges: changes,
    queueRate: w.queueRateMax > 0 ? { max: w.queueRateMax, perMs: w.queueRatePerMs } : null,
    rateChanges: rateChanges ? planRateChanges(keys, safetyMs, rateChanges.everyMs, rateChanges.random) : [],
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
