import { isDeepStrictEqual } from 'node:util';
import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import { assertMaxAttempts, assertPositiveInteger, assertQueueName, assertOptionsObject, assertRate, checkLimitTarget, checkOptions, InvalidArgumentError, resolveLimits, showKey, showValue, type SchedulerLimits } from '../core/index.js';
import { assertFinishMode, assertHistoryPolicy, type JobStore } from '../store/index.js';
import { checkAttemptHooks, resolveWorkerOptions, WORKER_OPTION_KEYS, type ResolvedWorkerOptions } from '../worker/index.js';
import { checkScheduledVerifyOptions } from '../verify/index.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { HOOKS_WITHOUT_WORKER, OPTION_NEEDS_BUILT_STORE, VERIFY_WITHOUT_WORKER } from './scheduler.messages.js';
import { checkProducerOptions } from './defined-jobs.js';
import { SCHEDULER_WORKER_OPTIONS } from './scheduler.tokens.js';

/** Every key forRoot/forRootAsync understands: the worker's (from its defaults), the module's, and the builder's extras. */
export const SCHEDULER_OPTION_KEYS: ReadonlySet<string> = new Set<string>([
  ...WORKER_OPTION_KEYS,
  'store', 'dataSource', 'schema', 'tablePrefix', 'limits', 'maxAttempts', 'autoStart', 'migrationsRun', 'historyPolicy', 'finish', 'queueLimits', 'rateLimits', 'asyncClaimCommit',
  'poolMode', 'preparedStatements', 'listenUrl',
  'worker', 'jobs', 'attemptHooks', 'telemetry', 'verify',
  'isGlobal', 'dataSourceName',
]);

/** The options only a PostgreSQL store the module builds takes: SQLite refuses them, and a store passed in has its own. */
export const POSTGRES_ONLY_OPTIONS = ['asyncClaimCommit', 'poolMode', 'preparedStatements', 'listenUrl'] as const;

/** The keys `forRootAsync` takes: Nest's async-provider keys and the module's extras. */
export const SCHEDULER_ASYNC_OPTION_KEYS: ReadonlySet<string> = new Set<string>([
  'imports', 'useFactory', 'inject', 'useClass', 'useExisting', 'provideInjectionTokensFrom',
  'isGlobal', 'dataSourceName',
]);

/**
 * Checks every module option that can be checked without handlers, and returns the worker's
 * options resolved: the one resolution the store, the explorer and the worker all use.
 */
export function checkModuleOptions(options: SchedulerModuleOptions, limits: SchedulerLimits): ResolvedWorkerOptions {
  // A misspelt option (`concurency: 0`) would otherwise be ignored and its default used in silence.
  assertOptionsObject(options, 'SchedulerModule options');
  checkOptions(options, SCHEDULER_OPTION_KEYS, { what: 'SchedulerModule', argument: 'SchedulerModule options', docs: 'docs/module-options.md' });
  const worker = resolveWorkerOptions(options);
  if (options.historyPolicy !== undefined) assertHistoryPolicy(options.historyPolicy);
  if (options.finish !== undefined) assertFinishMode(options.finish);
  for (const flag of ['autoStart', 'migrationsRun', 'asyncClaimCommit', 'preparedStatements'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw new InvalidArgumentError(`${flag} must be true or false, got ${showValue(options[flag])}.`, flag);
    }
  }
  if (options.maxAttempts !== undefined) assertMaxAttempts(options.maxAttempts, limits.maxAttemptsCeiling, 'maxAttempts');
  checkProducerOptions(options);
  if (checkAttemptHooks(options.attemptHooks).length > 0 && options.worker === false) {
    throw new InvalidArgumentError(HOOKS_WITHOUT_WORKER(), 'attemptHooks');
  }
  if (checkScheduledVerifyOptions(options.verify) !== null && options.worker === false) {
    throw new InvalidArgumentError(VERIFY_WITHOUT_WORKER(), 'verify');
  }
  const queueLimits = options.queueLimits;
  if (queueLimits !== undefined) {
    if (queueLimits === null || typeof queueLimits !== 'object' || Array.isArray(queueLimits)) {
      throw new InvalidArgumentError('queueLimits must be an object of queue names to limits.', 'queueLimits');
    }
    for (const [queue, max] of Object.entries(queueLimits)) {
      assertQueueName(queue, 'queueLimits key');
      if (max !== null) assertPositiveInteger(max, `queueLimits.${queue}`, 10_000);
    }
  }
  checkRateLimits(options.rateLimits);
  return worker;
}

/** Checks the `rateLimits` option: a list of `{ queue, max, perMs }` or `{ key, max, perMs }`, each target once. */
function checkRateLimits(rateLimits: unknown): void {
  if (rateLimits === undefined) return;
  if (!Array.isArray(rateLimits)) {
    throw new InvalidArgumentError(`rateLimits must be an array of { queue, max, perMs } or { key, max, perMs }, got ${showValue(rateLimits)}.`, 'rateLimits');
  }
  const seen = new Set<string>();
  rateLimits.forEach((entry: unknown, i) => {
    const where = `rateLimits[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new InvalidArgumentError(`${where} must be an object { queue, max, perMs } or { key, max, perMs }, got ${showValue(entry)}.`, where);
    }
    const { queue, key, ...rate } = entry as { queue?: unknown; key?: unknown };
    const unknown = Object.keys(rate).find((name) => name !== 'max' && name !== 'perMs');
    if (unknown !== undefined) throw new InvalidArgumentError(`${where} has an unknown key ${showKey(unknown)}; it takes { queue or key, max, perMs }.`, where);
    // The store's rule for a limit's target, so a target the store refuses is refused here in the same words.
    const checked = checkLimitTarget({ queue, key }, where, { where: `${where}.` });
    assertRate(rate, where);
    const target = 'queue' in checked ? `queue ${checked.queue}` : `key ${checked.key}`;
    if (seen.has(target)) throw new InvalidArgumentError(`rateLimits sets the ${target} twice; give each target one rate.`, where);
    seen.add(target);
  });
}

/**
 * The module options, checked, as the worker options they resolve to. The store's provider
 * injects it, so a bad option stops the boot before the store migrates or anything is written.
 */
export function workerOptionsProvider(optionsToken: InjectionToken): FactoryProvider<ResolvedWorkerOptions> {
  return {
    provide: SCHEDULER_WORKER_OPTIONS,
    inject: [optionsToken],
    useFactory: (options: SchedulerModuleOptions) => checkModuleOptions(options, options?.store?.limits ?? resolveLimits(options?.limits)),
  };
}

/**
 * With an explicit `store`, the options that shape a built store cannot apply: refuse them rather
 * than ignore them, unless they say what the store already does.
 */
export function checkExplicitStore(options: SchedulerModuleOptions, store: JobStore): void {
  for (const option of ['schema', 'tablePrefix', 'dataSource', ...POSTGRES_ONLY_OPTIONS] as const) {
    if (options[option] !== undefined) throw new InvalidArgumentError(OPTION_NEEDS_BUILT_STORE(option), option);
  }
  if (options.limits !== undefined && !isDeepStrictEqual({ ...resolveLimits(options.limits) }, { ...store.limits })) {
    throw new InvalidArgumentError(OPTION_NEEDS_BUILT_STORE('limits'), 'limits');
  }
  if (options.finish !== undefined && options.finish !== store.finish) {
    throw new InvalidArgumentError(OPTION_NEEDS_BUILT_STORE('finish'), 'finish');
  }
}
