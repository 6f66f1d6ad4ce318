/** The JobStore the module uses. */
export const SCHEDULER_STORE = Symbol('SCHEDULER_STORE');
/** The worker options the module options resolve to, resolved once at boot (internal). */
export const SCHEDULER_WORKER_OPTIONS = Symbol('SCHEDULER_WORKER_OPTIONS');
/** The attempt's JobContext, for request-scoped providers. An alias of REQUEST during a job attempt. */
export const JOB_CONTEXT = Symbol('JOB_CONTEXT');
/** The attempt's transaction-bound EntityManager. */
export const JOB_ENTITY_MANAGER = Symbol('JOB_ENTITY_MANAGER');
/** Metadata key of `@Job` options on a class. */
export const JOB_METADATA = 'nestjs-durable-scheduler:job';
/** Metadata key of `@OnJobTransition` options on a method. */
export const OBSERVER_METADATA = 'nestjs-durable-scheduler:observer';
