import type { DriverGroup, DriverGroupListParams } from '../../operator-reads.js';
import type { MysqlStatement } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';

type Counts = { due: number | string; later: number | string; oldest: string | null; max: number | null };

/**
 * Groups with scheduled jobs, in group order (see the PostgreSQL query), through jobs_group_idx
 * (migration 0025: the group and run time of a scheduled grouped job, NULL for every other). The
 * groups come from a loose index scan whose steps are statements of one script chained through a
 * session variable, one descent each (batch-ids.query.ts says why MariaDB needs that form); then a
 * statement per group counts its due and later jobs up to `countScan` along the same index, with
 * the group bound as a constant, and reads its oldest due run time and its key's cap. Both round
 * trips read one transaction's snapshot and split due from later at one instant, so a group is
 * counted as it was when it was found.
 */
export async function listGroups(db: MysqlTransaction, t: MysqlNaming, { limit, after, countScan }: DriverGroupListParams): Promise<DriverGroup[]> {
  const statements: MysqlStatement[] = [
    { sql: 'SET @groups_now = UTC_TIMESTAMP(3)' },
    after === null
      ? { sql: `SELECT MIN(waiting_group_key) INTO @group_page FROM ${t.jobs}` }
      : { sql: `SELECT MIN(waiting_group_key) INTO @group_page FROM ${t.jobs} WHERE waiting_group_key > ?`, values: [after] },
    { sql: 'SELECT @group_page AS g' },
  ];
  const step: MysqlStatement = {
    sql: `SELECT (SELECT waiting_group_key FROM ${t.jobs} WHERE @group_page IS NOT NULL AND waiting_group_key > @group_page ORDER BY waiting_group_key LIMIT 1) INTO @group_page`,
  };
  for (let i = 1; i < limit; i++) statements.push(step, { sql: 'SELECT @group_page AS g' });
  const results = await db.script(statements);
  const groups: string[] = [];
  for (let i = 2; i < results.length; i += 2) {
    const group = (results[i] as { g: Buffer | string | null }[])[0]?.g ?? null;
    if (group === null) break;
    // A user variable holding VARBINARY comes back as bytes; the group was written as UTF-8.
    groups.push(typeof group === 'string' ? group : group.toString('utf8'));
  }
  if (groups.length === 0) return [];
  const one = `SELECT
      (SELECT COUNT(*) FROM (SELECT 1 FROM ${t.jobs} WHERE waiting_group_key = ? AND waiting_group_run_at <= @groups_now LIMIT ?) d) AS due,
      (SELECT COUNT(*) FROM (SELECT 1 FROM ${t.jobs} WHERE waiting_group_key = ? AND waiting_group_run_at > @groups_now LIMIT ?) l) AS later,
      (SELECT MIN(waiting_group_run_at) FROM ${t.jobs} WHERE waiting_group_key = ? AND waiting_group_run_at <= @groups_now) AS oldest,
      (SELECT max FROM ${t.limits} WHERE \`key\` = CONCAT('key:', ?)) AS max`;
  const counted = (await db.script(groups.map((group) => ({ sql: one, values: [group, countScan, group, countScan, group, group] })))) as Counts[][];
  return groups.map((group, i) => {
    const row = counted[i]![0]!;
    return {
      group,
      due: Number(row.due),
      later: Number(row.later),
      oldestDueAt: row.oldest === null ? null : fromMysqlInstant(row.oldest),
      concurrencyMax: row.max === null ? null : Number(row.max),
    };
  });
}
