import type { StoreHealth } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * What holds back vacuum on the jobs table, from PostgreSQL's own views: the oldest other session
 * of this database whose transaction holds an xid or a snapshot (pg_stat_activity shows another
 * role's sessions only to a member of pg_read_all_stats), the transactions begun since the oldest
 * one still running (from this statement's snapshot, which every role can read), and the jobs
 * table's dead and live rows and last vacuum as its statistics last counted them.
 */
export function storeHealthQuery(t: PostgresNaming) {
  const text = `
    SELECT
      o.pid, o.state, o.age_ms,
      (pg_snapshot_xmax(pg_current_snapshot())::text::bigint - pg_snapshot_xmin(pg_current_snapshot())::text::bigint) AS horizon_xids,
      s.n_dead_tup AS dead, s.n_live_tup AS live, greatest(s.last_vacuum, s.last_autovacuum) AS vacuumed
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (
      SELECT pid, coalesce(state, 'unknown') AS state, (extract(epoch FROM clock_timestamp() - xact_start) * 1000)::float8 AS age_ms
      FROM pg_stat_activity
      WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)
      ORDER BY xact_start
      LIMIT 1
    ) o ON true
    LEFT JOIN pg_stat_user_tables s ON s.relid = '${t.jobs}'::regclass`;
  return async (db: PgExecutor): Promise<StoreHealth> => {
    type Row = { pid: number | null; state: string | null; age_ms: number | null; horizon_xids: string; dead: string | null; live: string | null; vacuumed: Date | null };
    const row = (await db.query<Row>(text))[0]!;
    return {
      oldestTransaction: row.pid === null ? null : { ageMs: Math.max(0, Math.round(row.age_ms!)), pid: row.pid, state: row.state! },
      horizonXids: Number(row.horizon_xids),
      deadJobRows: row.dead === null ? null : Number(row.dead),
      liveJobRows: row.live === null ? null : Number(row.live),
      lastVacuumAt: row.vacuumed,
    };
  };
}
