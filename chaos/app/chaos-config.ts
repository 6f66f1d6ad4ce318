/** What the runner tells each process, through its environment. */
export interface ChaosConfig {
  readonly role: 'worker' | 'producer';
  /** Unique per process incarnation; the worker id, the PostgreSQL application_name and the log's name. */
  readonly name: string;
  /** The database the run is on; its DataSource type. */
  readonly store: 'postgres' | 'mariadb';
  readonly databaseUrl: string;
  /** Schema of the chaos tables (enqueued, effects); on MariaDB a database, the sessions' default one. */
  readonly schema: string;
  /** Schema of the scheduler's tables; on MariaDB a database. */
  readonly schedulerSchema: string;
  /** The append-only execution log of this process. */
  readonly logFile: string;
  readonly seed: number;
  readonly leaseMs: number;
  readonly concurrency: number;
  /** Producer transactions per second. */
  readonly rate: number;
}

export function chaosConfig(env: NodeJS.ProcessEnv): ChaosConfig {
  const required = (key: string) => {
    const value = env[key];
    if (!value) throw new Error(`${key} is not set; chaos processes are started by chaos/run.mjs.`);
    return value;
  };
  const role = required('CHAOS_ROLE');
  if (role !== 'worker' && role !== 'producer') throw new Error(`CHAOS_ROLE must be worker or producer, got ${role}.`);
  const store = env.CHAOS_STORE ?? 'postgres';
  if (store !== 'postgres' && store !== 'mariadb') throw new Error(`CHAOS_STORE must be postgres or mariadb, got ${store}.`);
  return {
    role,
    name: required('CHAOS_NAME'),
    store,
    databaseUrl: required('CHAOS_DATABASE_URL'),
    schema: required('CHAOS_SCHEMA'),
    schedulerSchema: required('CHAOS_SCHEDULER_SCHEMA'),
    logFile: required('CHAOS_LOG'),
    seed: Number(env.CHAOS_SEED ?? 1),
    leaseMs: Number(env.CHAOS_LEASE_MS ?? 2_500),
    concurrency: Number(env.CHAOS_CONCURRENCY ?? 4),
    rate: Number(env.CHAOS_RATE ?? 3),
  };
}
