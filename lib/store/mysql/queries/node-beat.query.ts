import type { FinishMode } from '../../../core/index.js';
import type { DriverNodeBeatParams } from '../../checked/store-driver.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Upserts a node's registry row by the database's clock, in one statement of its own: a beat that
 * fails must never fail the renewal of a lease. The first beat of an id, or the first after its
 * stop, starts a run (`started_at`); others keep it. MySQL applies the assignments of ON DUPLICATE
 * KEY UPDATE left to right, each seeing the ones before, so `started_at` is decided before
 * `stopped_at` is cleared. The row records the finish mode of the store the beat goes through.
 * VALUES() is what MariaDB has for the new row (MySQL 8.0.20 prefers a row alias, which MariaDB lacks).
 */
export function nodeBeatQuery(t: MysqlNaming) {
  const text = `INSERT INTO ${t.nodes} (id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish)
    VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), NULL, ?)
    ON DUPLICATE KEY UPDATE host = VALUES(host), pid = VALUES(pid), version = VALUES(version), queues = VALUES(queues),
      concurrency = VALUES(concurrency), running = VALUES(running), last_seen_at = VALUES(last_seen_at), finish = VALUES(finish),
      started_at = IF(stopped_at IS NULL, started_at, VALUES(started_at)), stopped_at = NULL`;
  return async (db: MysqlExecutor, node: DriverNodeBeatParams, finish: FinishMode): Promise<void> => {
    const { id, host, pid, version, queues, concurrency, running } = node;
    await db.run(text, [id, host, pid, version, JSON.stringify(queues), concurrency, running, finish]);
  };
}
