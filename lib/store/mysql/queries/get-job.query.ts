import type { JobRow } from '../../job-row.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';

/** One job by id, through the id's unique index. */
export async function getJob(db: MysqlExecutor, t: MysqlNaming, jobId: string): Promise<JobRow | null> {
  const [row] = await db.query<MysqlJobRow>(`SELECT ${JOB_COLUMNS} FROM ${t.jobs} j WHERE j.id = ?`, [jobId]);
  return row ? fromMysqlRow(row) : null;
}
