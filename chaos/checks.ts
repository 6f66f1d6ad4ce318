/**
 * The chaos run's verdict, in SQL over three sources: what producers committed (`enqueued`, written
 * in the enqueue's own transaction), what handlers wrote through the attempt's EntityManager
 * (`effects`, committed only with the fenced success write), and what every process appended to its
 * log outside any transaction (`executions`, `settled`, loaded after the run), plus the scheduler's
 * own tables and the controller's record of pauses.
 *
 * Glossary: an *execution* is one run of a handler body (a (job, attempt, worker) triple); an
 * *applied* outcome is one the fenced write accepted; a *stale* report is one it refused.
 */

/** Runs one statement and resolves with its rows. */
export type Sql = (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

export interface CheckNames {
  /** Schema of the chaos tables (on MariaDB, a database). */
  readonly chaos: string;
  /** Schema of the scheduler's tables (on MariaDB, a database). */
  readonly scheduler: string;
  /** The scheduler's table prefix: '' on PostgreSQL, the MySQL store's `durable_scheduler_` on MariaDB. */
  readonly prefix?: string;
}

/**
 * What the checks' SQL says differently on the two servers the chaos run uses. Everything else in
 * a check is the same text on both, so a check added here is made on both.
 */
export interface ChaosDialect {
  readonly name: 'postgres' | 'mariadb';
  /** A quoted identifier. */
  id(name: string): string;
  /** The n-th (1-based) statement parameter. */
  param(n: number): string;
  /** Two strings joined. */
  concat(a: string, b: string): string;
  /** True when more than `ms` (an SQL number) milliseconds lie between the instants `from` and `to`. */
  longerThan(from: string, to: string, ms: string): string;
  /** A FROM item yielding one row `parent(id)` per parent id of the `enqueued` row `e`. */
  parentsOf(e: string): string;
}

export const POSTGRES_DIALECT: ChaosDialect = {
  name: 'postgres',
  id: (name) => `"${name}"`,
  param: (n) => `$${n}`,
  concat: (a, b) => `${a} || ${b}`,
  longerThan: (from, to, ms) => `${to} - ${from} > (${ms}) * interval '1 millisecond'`,
  parentsOf: (e) => `LATERAL unnest(${e}.parents) AS parent(id)`,
};

/**
 * MariaDB 10.6+ (and MySQL 8): ids as CHAR(36) ascii_bin like the store's, instants as DATETIME(3)
 * holding UTC, a job's parents as a JSON array read through JSON_TABLE.
 */
export const MARIADB_DIALECT: ChaosDialect = {
  name: 'mariadb',
  id: (name) => `\`${name}\``,
  param: () => '?',
  concat: (a, b) => `CONCAT(${a}, ${b})`,
  longerThan: (from, to, ms) => `TIMESTAMPDIFF(MICROSECOND, ${from}, ${to}) > (${ms}) * 1000`,
  parentsOf: (e) => `JSON_TABLE(${e}.parents, '$[*]' COLUMNS (id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin PATH '$')) AS parent`,
};

/** The quoted name of a scheduler table. */
function schedulerTable(names: CheckNames, d: ChaosDialect, table: string): string {
  return `${d.id(names.scheduler)}.${d.id(`${names.prefix ?? ''}${table}`)}`;
}

/** Counts that must all be 0, in the order they are printed. */
export const SAFETY = [
  ['lost', 'lost: a committed enqueue that never reached a terminal state'],
  ['phantom', 'phantom: a job whose enqueue did not commit'],
  ['unexpectedState', 'unexpected terminal state (for its kind)'],
  ['appliedTwice', 'outcome applied twice (history)'],
  ['effectsTwice', 'attempt-EntityManager rows applied twice'],
  ['staleAccepted', 'stale outcome accepted'],
  ['staleRows', 'rows written by a stale or failed attempt'],
  ['attemptLeasedTwice', 'one attempt leased twice'],
  ['limitViolations', 'concurrency limit exceeded'],
  ['poisonWrong', 'poison not dead-lettered at exactly maxAttempts'],
  ['dependantsEarly', 'dependant ran before its parents finished'],
] as const;

export type SafetyCounts = Record<(typeof SAFETY)[number][0], number>;

/** Allowed by the guarantee, reported so a run shows what it exercised. */
export interface ObservedCounts {
  jobs: number;
  executions: number;
  /** Executions beyond the first of their job (retries and runs whose outcome never applied). */
  reExecutions: number;
  /** Reports the fenced write refused. */
  staleRejected: number;
  /** Outcomes a worker did not send because it already knew its lease was gone. */
  dropped: number;
  /** Highest number of applied executions of one tenant key running at once. */
  maxPerKey: number;
  /** Last attempts whose lease lapsed, settled by the maintenance sweep ('lease expired'). */
  sweptLeases: number;
}

const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;

/** The tables the chaos app writes and the runner loads. */
export function chaosTablesSql(schema: string, dialect: ChaosDialect = POSTGRES_DIALECT): string {
  if (dialect.name === 'mariadb') return mariadbChaosTablesSql(schema);
  return `
    CREATE SCHEMA IF NOT EXISTS "${schema}";
    CREATE TABLE "${schema}".enqueued (
      job_id uuid PRIMARY KEY, name text NOT NULL, kind text NOT NULL, expected text NOT NULL,
      producer text NOT NULL, parents uuid[] NOT NULL DEFAULT '{}', mode text,
      at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE TABLE "${schema}".effects (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, job_id uuid NOT NULL, attempt integer NOT NULL,
      worker_id text NOT NULL, written_at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE TABLE "${schema}".executions (
      worker_id text NOT NULL, job_id uuid NOT NULL, attempt integer NOT NULL, name text NOT NULL, key text,
      started_at timestamptz NOT NULL, ended_at timestamptz, threw boolean);
    CREATE TABLE "${schema}".settled (
      worker_id text NOT NULL, job_id uuid NOT NULL, attempt integer NOT NULL, kind text NOT NULL,
      status text NOT NULL, state text, at timestamptz NOT NULL);
    CREATE TABLE "${schema}".pauses (worker_id text NOT NULL, stopped_at timestamptz NOT NULL, resumed_at timestamptz NOT NULL);
    CREATE TABLE "${schema}".lease_audit (
      job_id uuid NOT NULL, attempt integer NOT NULL, worker_id text, state text NOT NULL, error text,
      leased_until timestamptz, at timestamptz NOT NULL);`;
}

/**
 * The same tables in a MariaDB database (several statements: the connection needs
 * `multipleStatements`). Ids and worker ids have the store's column types, so joins with its
 * tables compare like with like; a tenant key is bytes, as the store's concurrency_key is;
 * `parents` is a JSON array of ids. MariaDB runs the checks' correlated subqueries row by row
 * where PostgreSQL hashes them, hence the indexes on job_id.
 */
function mariadbChaosTablesSql(database: string): string {
  const d = `\`${database}\``;
  const id = 'CHAR(36) CHARACTER SET ascii COLLATE ascii_bin';
  const table = 'ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin';
  return `
    CREATE DATABASE IF NOT EXISTS ${d} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    CREATE TABLE ${d}.enqueued (
      job_id ${id} NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, kind VARCHAR(32) NOT NULL, expected VARCHAR(32) NOT NULL,
      producer VARCHAR(256) NOT NULL, parents LONGTEXT NOT NULL, mode VARCHAR(32) NULL,
      at DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3))) ${table};
    CREATE TABLE ${d}.effects (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, job_id ${id} NOT NULL, attempt INT NOT NULL,
      worker_id VARCHAR(256) NOT NULL, written_at DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3)), KEY (job_id)) ${table};
    CREATE TABLE ${d}.executions (
      worker_id VARCHAR(256) NOT NULL, job_id ${id} NOT NULL, attempt INT NOT NULL, name VARCHAR(255) NOT NULL, \`key\` VARBINARY(1024) NULL,
      started_at DATETIME(3) NOT NULL, ended_at DATETIME(3) NULL, threw BOOLEAN NULL, KEY (job_id, attempt)) ${table};
    CREATE TABLE ${d}.settled (
      worker_id VARCHAR(256) NOT NULL, job_id ${id} NOT NULL, attempt INT NOT NULL, kind VARCHAR(32) NOT NULL,
      status VARCHAR(16) NOT NULL, state VARCHAR(32) NULL, at DATETIME(3) NOT NULL, KEY (job_id)) ${table};
    CREATE TABLE ${d}.pauses (worker_id VARCHAR(256) NOT NULL, stopped_at DATETIME(3) NOT NULL, resumed_at DATETIME(3) NOT NULL) ${table};
    CREATE TABLE ${d}.lease_audit (
      job_id ${id} NOT NULL, attempt INT NOT NULL, worker_id VARCHAR(256) NULL, state VARCHAR(32) NOT NULL, error MEDIUMTEXT NULL,
      leased_until DATETIME(3) NULL, at DATETIME(3) NOT NULL, KEY (job_id)) ${table};`;
}

/**
 * An audit trigger the run installs on the scheduler's jobs table (after migrating it, before any
 * process starts): every write that takes a job out of `running` is recorded with the lease it
 * found and the database's time of that statement. It observes the fence rule itself: an outcome
 * may only apply while `leased_until` is still ahead.
 */
export function leaseAuditSql(names: CheckNames, dialect: ChaosDialect = POSTGRES_DIALECT): string {
  if (dialect.name === 'mariadb') {
    // In a trigger UTC_TIMESTAMP(3) is the start of the triggering statement, as
    // statement_timestamp() is on PostgreSQL. A trigger lives in its table's database.
    return `
      CREATE TRIGGER \`${names.scheduler}\`.chaos_lease_audit AFTER UPDATE ON ${schedulerTable(names, dialect, 'jobs')} FOR EACH ROW
      BEGIN
        IF OLD.state = 'running' AND NEW.state <> 'running' THEN
          INSERT INTO \`${names.chaos}\`.lease_audit (job_id, attempt, worker_id, state, error, leased_until, at)
          VALUES (OLD.id, OLD.attempt, OLD.worker_id, NEW.state, NEW.last_error, OLD.leased_until, UTC_TIMESTAMP(3));
        END IF;
      END`;
  }
  const fn = `"${names.chaos}".audit_lease_end`;
  return `
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO "${names.chaos}".lease_audit (job_id, attempt, worker_id, state, error, leased_until, at)
      VALUES (OLD.id, OLD.attempt, OLD.worker_id, NEW.state, NEW.last_error, OLD.leased_until, statement_timestamp());
      RETURN NULL;
    END $fn$;
    CREATE TRIGGER chaos_lease_audit AFTER UPDATE ON ${schedulerTable(names, dialect, 'jobs')}
      FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running') EXECUTE FUNCTION ${fn}();`;
}

/** Every safety count and the observed ones. `leaseMs` decides which pauses outlived a lease. */
export async function runChecks(
  sql: Sql,
  names: CheckNames,
  leaseMs: number,
  d: ChaosDialect = POSTGRES_DIALECT,
): Promise<{ safety: SafetyCounts; observed: ObservedCounts }> {
  const c = d.id(names.chaos);
  const jobs = schedulerTable(names, d, 'jobs');
  const jobHistory = schedulerTable(names, d, 'job_history');
  const limits = schedulerTable(names, d, 'concurrency_limits');
  const key = d.id('key');
  const count = async (text: string, params: readonly unknown[] = []) => Number((await sql(`SELECT count(*) AS n FROM (${text}) q`, params))[0]!.n);

  // Outcomes the store accepted: the final success (its lease stays on the row), and every
  // report a worker logged as applied.
  const applied = `
    SELECT j.id AS job_id, j.attempt, j.worker_id FROM ${jobs} j WHERE j.state = 'succeeded'
    UNION SELECT job_id, attempt, worker_id FROM ${c}.settled WHERE status = 'applied'`;
  const history = `
    SELECT job_id, id, state, attempt,
      max(attempt) OVER (PARTITION BY job_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_attempt
    FROM ${jobHistory}`;

  const safety: SafetyCounts = {
    lost: await count(`
      SELECT 1 FROM ${c}.enqueued e LEFT JOIN ${jobs} j ON j.id = e.job_id
      WHERE j.id IS NULL OR j.state NOT IN ${TERMINAL}`),
    phantom: await count(`SELECT 1 FROM ${jobs} j WHERE NOT EXISTS (SELECT 1 FROM ${c}.enqueued e WHERE e.job_id = j.id)`),
    unexpectedState: await count(`
      SELECT 1 FROM ${c}.enqueued e JOIN ${jobs} j ON j.id = e.job_id
      WHERE j.state IN ${TERMINAL} AND j.state <> e.expected
        -- a last-chance job whose last attempt a fault cost (its lease lapsed, or its connection
        -- died under the handler) is dead-lettered; only its own deliberate failure would be wrong
        AND NOT (e.kind = 'last-chance' AND j.state = 'dead_lettered' AND j.last_error NOT LIKE 'Error: chaos:%')`),
    // A job that became terminal twice, or an attempt whose outcome left 'running' twice. History
    // ids follow one job's writes in order on both servers: each write holds the job's row lock.
    appliedTwice: await count(`
      SELECT job_id FROM ${jobHistory} WHERE state IN ${TERMINAL} GROUP BY job_id HAVING count(*) > 1
      UNION
      SELECT job_id FROM (
        SELECT job_id, attempt, state, lag(state) OVER w AS state_before, lag(attempt) OVER w AS attempt_before
        FROM ${jobHistory} WINDOW w AS (PARTITION BY job_id ORDER BY id)) h
      WHERE state_before = 'running' AND state <> 'running' AND attempt = attempt_before
      GROUP BY job_id, attempt HAVING count(*) > 1`),
    effectsTwice: await count(`SELECT job_id FROM ${c}.effects GROUP BY job_id HAVING count(*) > 1`),
    staleAccepted: await count(
      `
      -- the final success names a lease that never ran that attempt
      SELECT j.id FROM ${jobs} j WHERE j.state = 'succeeded'
        AND NOT EXISTS (SELECT 1 FROM ${c}.executions x WHERE x.job_id = j.id AND x.attempt = j.attempt AND x.worker_id = j.worker_id)
      UNION ALL
      -- an older attempt's outcome written after a newer attempt's claim
      SELECT job_id FROM (${history}) h WHERE attempt < earlier_attempt
      UNION ALL
      -- an outcome written when the lease it was fenced on had already lapsed (the maintenance
      -- sweep, which settles lapsed leases on purpose, is the one writer allowed to)
      SELECT job_id FROM ${c}.lease_audit
      WHERE leased_until <= at AND NOT (error = 'lease expired' AND state IN ('dead_lettered', 'cancelled'))
      UNION ALL
      -- a report the worker was told was stale, yet the job's final success is that lease's
      SELECT st.job_id FROM ${c}.settled st JOIN ${jobs} j ON j.id = st.job_id
      WHERE st.status = 'stale' AND j.state = 'succeeded' AND j.attempt = st.attempt AND j.worker_id = st.worker_id
      UNION ALL
      -- an outcome applied after its worker sat paused for longer than a lease (plus a second for a
      -- heartbeat still in flight when it stopped), with the attempt started before the pause and
      -- its handler finishing after it: no heartbeat could have kept that lease alive
      SELECT a.job_id FROM (${applied}) a
      JOIN ${c}.executions x ON x.job_id = a.job_id AND x.attempt = a.attempt AND x.worker_id = a.worker_id
      JOIN ${c}.pauses p ON p.worker_id = x.worker_id
      WHERE ${d.longerThan('p.stopped_at', 'p.resumed_at', `${d.param(1)} + 1000`)}
        AND x.started_at < p.stopped_at AND x.ended_at > p.resumed_at`,
      [leaseMs],
    ),
    staleRows: await count(`
      SELECT 1 FROM ${c}.effects f WHERE NOT EXISTS (
        SELECT 1 FROM ${jobs} j WHERE j.id = f.job_id AND j.state = 'succeeded' AND j.attempt = f.attempt AND j.worker_id = f.worker_id)`),
    attemptLeasedTwice: await count(`SELECT 1 FROM ${c}.executions GROUP BY job_id, attempt HAVING count(*) > 1`),
    limitViolations: await count(`
      SELECT 1 FROM (${perKeyRunning(c, applied, key)}) r JOIN ${limits} l ON l.${key} = ${d.concat(`'key:'`, `r.${key}`)}
      WHERE r.d = 1 AND r.running > l.max`),
    poisonWrong: await count(`
      SELECT 1 FROM ${c}.enqueued e JOIN ${jobs} j ON j.id = e.job_id
      WHERE e.kind = 'poison' AND NOT (j.state = 'dead_lettered' AND j.attempt = j.max_attempts)`),
    // Each parent's outcome commits in a transaction that started at or after its finished_at, and
    // a dependant can only be claimed after that commit.
    dependantsEarly: await count(`
      SELECT 1 FROM ${c}.executions x
      JOIN ${c}.enqueued e ON e.job_id = x.job_id
      CROSS JOIN ${d.parentsOf('e')}
      LEFT JOIN ${jobs} p ON p.id = parent.id
      WHERE p.finished_at IS NULL OR p.state NOT IN ${TERMINAL} OR x.started_at < p.finished_at
        OR (e.mode = 'on_success' AND p.state <> 'succeeded')`),
  };

  const [row] = await sql(`
    SELECT
      (SELECT count(*) FROM ${c}.enqueued) AS jobs,
      (SELECT count(*) FROM ${c}.executions) AS executions,
      (SELECT count(*) - count(DISTINCT job_id) FROM ${c}.executions) AS re_executions,
      (SELECT count(*) FROM ${c}.settled WHERE status = 'stale') AS stale_rejected,
      (SELECT count(*) FROM ${c}.settled WHERE status = 'dropped') AS dropped,
      (SELECT coalesce(max(running), 0) FROM (${perKeyRunning(c, applied, key)}) r) AS max_per_key,
      (SELECT count(*) FROM ${c}.lease_audit WHERE error = 'lease expired' AND state IN ('dead_lettered', 'cancelled')) AS swept_leases`);
  const observed: ObservedCounts = {
    jobs: Number(row!.jobs),
    executions: Number(row!.executions),
    reExecutions: Number(row!.re_executions),
    staleRejected: Number(row!.stale_rejected),
    dropped: Number(row!.dropped),
    maxPerKey: Number(row!.max_per_key),
    sweptLeases: Number(row!.swept_leases),
  };
  return { safety, observed };
}

/**
 * A sweep over the start (+1) and end (-1) of every applied execution of a keyed job, with the
 * number running after each event. Only applied executions count: an outcome was accepted, so the
 * lease (and its slot) was live from claim to that write, which covers the logged start and end.
 * Executions that were killed or went stale are left out, since their lease may have lapsed
 * while the body ran on. At equal instants ends sort first.
 */
function perKeyRunning(c: string, applied: string, key: string): string {
  return `
    SELECT ${key}, t, d, sum(d) OVER (PARTITION BY ${key} ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS running FROM (
      SELECT x.${key}, x.started_at AS t, 1 AS d FROM ${c}.executions x JOIN (${applied}) a USING (job_id, attempt, worker_id)
      WHERE x.${key} IS NOT NULL AND x.ended_at IS NOT NULL
      UNION ALL
      SELECT x.${key}, x.ended_at, -1 FROM ${c}.executions x JOIN (${applied}) a USING (job_id, attempt, worker_id)
      WHERE x.${key} IS NOT NULL AND x.ended_at IS NOT NULL) events`;
}

/** Whether every safety count is 0. */
export function safe(safety: SafetyCounts): boolean {
  return Object.values(safety).every((n) => n === 0);
}
