import { limitOf } from '../../checked/effect-params.js';
import type { ConcurrencyLimit } from '../../job-store.types.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/** The concurrency limits by storage key: every one, or a page after a key, read in order from the key. */
export async function listLimits(db: MysqlExecutor, t: MysqlNaming, { limit, after }: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
  const rows =
    limit === null
      ? await db.query<{ key: string; max: number }>(`SELECT \`key\`, max FROM ${t.limits} ORDER BY \`key\``)
      : await db.query<{ key: string; max: number }>(`SELECT \`key\`, max FROM ${t.limits} WHERE \`key\` > ? ORDER BY \`key\` LIMIT ?`, [after, limit]);
  return rows.map((row) => limitOf(row.key, row.max));
}
