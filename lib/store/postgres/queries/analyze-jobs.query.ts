import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** How long after a look that found no statistics (or failed) the guard looks again. */
const RECHECK_MS = 60_000;

/**
 * Gives the jobs table planner statistics once it has a backlog and PostgreSQL has none yet.
 *
 * Without statistics the planner guesses a handful of due jobs and reads a claim's candidates as a
 * bitmap, sorting every due job on every claim; a bitmap scan also never marks the entries of
 * claimed jobs dead, so each claim visits every version finished jobs left behind since the last
 * vacuum. Autovacuum's first analyze can come minutes late on a busy server, and until then a new
 * table claims at a fraction of its rate. With statistics the claim reads the claim index in order
 * and stops at the batch size.
 *
 * `check()` is cheap to call after every full claim: it looks at most once a minute, never runs
 * two at once, analyzes only while `pg_stats` has nothing on the table's `state` column, and stops
 * looking once the table has statistics (autovacuum keeps them from then on). It never throws:
 * statistics are an optimization, and autovacuum gathers them in the end anyway.
 */
export function analyzeJobsGuard(t: PostgresNaming, now: () => number = Date.now) {
  let nextCheckAt = 0;
  let settled = false;
  let running: Promise<boolean> | undefined;
  const table = `${t.prefix}jobs`;

  const run = async (db: PgExecutor): Promise<boolean> => {
    const [row] = await db.query<{ missing: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = 'state') AS missing`,
      [t.schema, table],
    );
    if (row?.missing) await db.query(`ANALYZE ${t.jobs}`);
    settled = true;
    return row?.missing === true;
  };

  return {
    /** Resolves with whether this call analyzed the table (false when it only looked, or failed). */
    check(db: PgExecutor): Promise<boolean> {
      if (running) return running;
      if (settled) return Promise.resolve(false);
      const at = now();
      if (at < nextCheckAt) return Promise.resolve(false);
      nextCheckAt = at + RECHECK_MS;
      running = run(db)
        .catch(() => false)
        .finally(() => (running = undefined));
      return running;
    },
  };
}
