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
  /** Schema of the chaos tables. */
  readonly chaos: string;
  /** Schema of the scheduler's tables. */
  readonly scheduler: string;
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
export function chaosTablesSql(schema: string): string {
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
 * An audit trigger the run installs on the scheduler's jobs table (after migrating it, before any
 * process starts): every write that takes a job out of `running` is recorded with the lease it
 * found and the database's time of that statement. It observes the fence rule itself: an outcome
 * may only apply while `leased_until` is still ahead.
 */
export function leaseAuditSql(names: CheckNames): string {
  const fn = `"${names.chaos}".audit_lease_end`;
  return `
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO "${names.chaos}".lease_audit (job_id, attempt, worker_id, state, error, leased_until, at)
      VALUES (OLD.id, OLD.attempt, OLD.worker_id, NEW.state, NEW.last_error, OLD.leased_until, statement_timestamp());
      RETURN NULL;
    END $fn$;
    CREATE TRIGGER chaos_lease_audit AFTER UPDATE ON "${names.scheduler}".jobs
      FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running') EXECUTE FUNCTION ${fn}();`;
}

/** Every safety count and the observed ones. `leaseMs` decides which pauses outlived a lease. */
export async function runChecks(sql: Sql, names: CheckNames, leaseMs: number): Promise<{ safety: SafetyCounts; observed: ObservedCounts }> {
  const c = `"${names.chaos}"`;
  const s = `"${names.scheduler}"`;
  const count = async (text: string, params: readonly unknown[] = []) => Number((await sql(`SELECT count(*) AS n FROM (${text}) q`, params))[0]!.n);

  // Outcomes the store accepted: the final success (its lease stays on the row), and every
  // report a worker logged as applied.
  const applied = `
    SELECT j.id AS job_id, j.attempt, j.worker_id FROM ${s}.jobs j WHERE j.state = 'succeeded'
    UNION SELECT job_id, attempt, worker_id FROM ${c}.settled WHERE status = 'applied'`;
  const history = `
    SELECT job_id, id, state, attempt,
      max(attempt) OVER (PARTITION BY job_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_attempt
    FROM ${s}.job_history`;

  const safety: SafetyCounts = {
    lost: await count(`
      SELECT 1 FROM ${c}.enqueued e LEFT JOIN ${s}.jobs j ON j.id = e.job_id
      WHERE j.id IS NULL OR j.state NOT IN ${TERMINAL}`),
    phantom: await count(`SELECT 1 FROM ${s}.jobs j WHERE NOT EXISTS (SELECT 1 FROM ${c}.enqueued e WHERE e.job_id = j.id)`),
    unexpectedState: await count(`
      SELECT 1 FROM ${c}.enqueued e JOIN ${s}.jobs j ON j.id = e.job_id
      WHERE j.state IN ${TERMINAL} AND j.state <> e.expected
        -- a last-chance job whose last attempt a fault cost (its lease lapsed, or its connection
        -- died under the handler) is dead-lettered; only its own deliberate failure would be wrong
        AND NOT (e.kind = 'last-chance' AND j.state = 'dead_lettered' AND j.last_error NOT LIKE 'Error: chaos:%')`),
    // A job that became terminal twice, or an attempt whose outcome left 'running' twice.
    appliedTwice: await count(`
      SELECT job_id FROM ${s}.job_history WHERE state IN ${TERMINAL} GROUP BY job_id HAVING count(*) > 1
      UNION
      SELECT job_id FROM (
        SELECT job_id, attempt, state, lag(state) OVER w AS before, lag(attempt) OVER w AS attempt_before
        FROM ${s}.job_history WINDOW w AS (PARTITION BY job_id ORDER BY id)) h
      WHERE before = 'running' AND state <> 'running' AND attempt = attempt_before
      GROUP BY job_id, attempt HAVING count(*) > 1`),
    effectsTwice: await count(`SELECT job_id FROM ${c}.effects GROUP BY job_id HAVING count(*) > 1`),
    staleAccepted: await count(
      `
      -- the final success names a lease that never ran that attempt
      SELECT j.id FROM ${s}.jobs j WHERE j.state = 'succeeded'
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
      SELECT st.job_id FROM ${c}.settled st JOIN ${s}.jobs j ON j.id = st.job_id
      WHERE st.status = 'stale' AND j.state = 'succeeded' AND j.attempt = st.attempt AND j.worker_id = st.worker_id
      UNION ALL
      -- an outcome applied after its worker sat paused for longer than a lease (plus a second for a
      -- heartbeat still in flight when it stopped), with the attempt started before the pause and
      -- its handler finishing after it: no heartbeat could have kept that lease alive
      SELECT a.job_id FROM (${applied}) a
      JOIN ${c}.executions x ON x.job_id = a.job_id AND x.attempt = a.attempt AND x.worker_id = a.worker_id
      JOIN ${c}.pauses p ON p.worker_id = x.worker_id
      WHERE p.resumed_at - p.stopped_at > ($1 + 1000) * interval '1 millisecond'
        AND x.started_at < p.stopped_at AND x.ended_at > p.resumed_at`,
      [leaseMs],
    ),
    staleRows: await count(`
      SELECT 1 FROM ${c}.effects f WHERE NOT EXISTS (
        SELECT 1 FROM ${s}.jobs j WHERE j.id = f.job_id AND j.state = 'succeeded' AND j.attempt = f.attempt AND j.worker_id = f.worker_id)`),
    attemptLeasedTwice: await count(`SELECT 1 FROM ${c}.executions GROUP BY job_id, attempt HAVING count(*) > 1`),
    limitViolations: await count(`
      SELECT 1 FROM (${perKeyRunning(c, applied)}) r JOIN ${s}.concurrency_limits l ON l.key = 'key:' || r.key
      WHERE r.d = 1 AND r.running > l.max`),
    poisonWrong: await count(`
      SELECT 1 FROM ${c}.enqueued e JOIN ${s}.jobs j ON j.id = e.job_id
      WHERE e.kind = 'poison' AND NOT (j.state = 'dead_lettered' AND j.attempt = j.max_attempts)`),
    // Each parent's outcome commits in a transaction that started at or after its finished_at, and
    // a dependant can only be claimed after that commit.
    dependantsEarly: await count(`
      SELECT 1 FROM ${c}.executions x
      JOIN ${c}.enqueued e ON e.job_id = x.job_id
      CROSS JOIN LATERAL unnest(e.parents) AS parent(id)
      LEFT JOIN ${s}.jobs p ON p.id = parent.id
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
      (SELECT coalesce(max(running), 0) FROM (${perKeyRunning(c, applied)}) r) AS max_per_key,
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
function perKeyRunning(c: string, applied: string): string {
  return `
    SELECT key, t, d, sum(d) OVER (PARTITION BY key ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS running FROM (
      SELECT x.key, x.started_at AS t, 1 AS d FROM ${c}.executions x JOIN (${applied}) a USING (job_id, attempt, worker_id)
      WHERE x.key IS NOT NULL AND x.ended_at IS NOT NULL
      UNION ALL
      SELECT x.key, x.ended_at, -1 FROM ${c}.executions x JOIN (${applied}) a USING (job_id, attempt, worker_id)
      WHERE x.key IS NOT NULL AND x.ended_at IS NOT NULL) events`;
}

/** Whether every safety count is 0. */
export function safe(safety: SafetyCounts): boolean {
  return Object.values(safety).every((n) => n === 0);
}
