import type { JobRow } from '../../job-row.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';

/** Dead-lettered jobs, most recently dead-lettered first, read backwards through jobs_finished_idx (state, finished_at, seq). */
export async function listDeadLettered(db: MysqlExecutor, t: MysqlNaming, limit: number): Promise<JobRow[]> {
  const rows = await db.query<MysqlJobRow>(
    `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j FORCE INDEX (jobs_finished_idx)
     WHERE j.state = 'dead_lettered' ORDER BY j.finished_at DESC, j.seq DESC LIMIT ?`,
    [limit],
  );
  return rows.map(fromMysqlRow);
}
