/** Error texts, one sentence each, built from what went wrong. */

export const DUPLICATE_JOB_NAME = (name: string, first: string, second: string) =>
  `The job name "${name}" is claimed by both ${first} and ${second}; each wire name needs exactly one handler class.`;

export const MISSING_HANDLE_METHOD = (className: string, name: string, batch = false) =>
  `${className} is decorated with @Job('${name}') but has no ${batch ? 'handle(jobs, context)' : 'handle(payload, context)'} method.`;

export const UNKNOWN_QUEUE = (className: string, name: string, queue: string, queues: readonly string[]) =>
  `${className} (@Job '${name}') uses the queue "${queue}", which this module does not consume; add it to queues (${queues.join(', ')}).`;

export const NO_DATA_SOURCE = (name: string | undefined) =>
  `SchedulerModule found no TypeORM DataSource${name ? ` named "${name}"` : ''}; import TypeOrmModule.forRoot(...) or pass a store or dataSource option.`;

export const UNSUPPORTED_DATA_SOURCE = (type: string) =>
  `SchedulerModule supports PostgreSQL ("postgres"), MySQL ("mysql"), MariaDB ("mariadb") and SQLite ("better-sqlite3") DataSources, not "${type}"; pass a store option for anything else.`;

/** `shown` is the name as an error message shows it (quoted and escaped). */
export const UNKNOWN_JOB_NAME = (shown: string) =>
  `No @Job handler is registered for ${shown}; check the name, register its handler class as a provider, or enqueue by its defineJob definition (or list that in the module's jobs).`;

export const NOT_IN_ATTEMPT = (what: string) =>
  `${what} is only available inside a job attempt; inject it into a @Job handler or a provider it uses.`;

export const NOT_IN_BATCH_CALL = (what: string) =>
  `${what} is one job's, and a batch handler's call runs many jobs; read each job's context from the jobs its handle(jobs, context) receives, or inject REQUEST for the call's BatchContext.`;

export const BAD_HANDLER_OPTION = (className: string, name: string, option: string, expected: string) =>
  `${className} (@Job '${name}') sets ${option} to something other than ${expected}.`;

export const OBSERVERS_WITHOUT_HISTORY = (observers: readonly string[]) =>
  `${observers.join(', ')} observe${observers.length === 1 ? 's' : ''} job transitions, but historyPolicy is "off", so there is nothing to deliver; use "transitions" or "transitions_and_errors".`;

export const BAD_OBSERVER = (observer: string, problem: string) => `@OnJobTransition on ${observer} ${problem}.`;

export const DUPLICATE_OBSERVER = (id: string) =>
  `Two @OnJobTransition methods share the observer id "${id}"; give one of them its own id option.`;

export const HISTORY_POLICY_MISMATCH = (option: string, store: string) =>
  `historyPolicy is "${option}" but the store passed in records "${store}"; set historyPolicy on the store instead.`;

export const OPTION_NEEDS_BUILT_STORE = (option: string) =>
  `${option} shapes the store the module builds, but a store was passed in; set ${option} on that store instead.`;

export const POSTGRES_ONLY_ON_SQLITE = (option: string) => `${option} only applies to PostgreSQL; leave it unset on SQLite.`;
export const POSTGRES_ONLY_ON_MYSQL = (option: string) => `${option} only applies to PostgreSQL; leave it unset on MySQL and MariaDB.`;
export const SCHEMA_ON_SQLITE = () =>
  'schema only applies to PostgreSQL; on SQLite the tables are named by tablePrefix alone.';

export const HOOKS_WITHOUT_WORKER = () =>
  'attemptHooks wrap the attempts this node runs, but worker is false, so it runs none; register them on a worker node.';

export const VERIFY_WITHOUT_WORKER = () =>
  'verify runs on worker nodes, as the other maintenance does, but worker is false on this one; set it on a worker node.';
