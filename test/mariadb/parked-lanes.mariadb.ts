import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { LANES_PER_CLAIM } from '../../lib/store/group-turns.js';
import { MysqlJobStore } from '../../lib/store/index.js';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import type { MysqlExecutor } from '../../lib/store/mysql/mysql-executor.js';
import { MysqlTransaction } from '../../lib/store/mysql/mysql-transaction.js';
import { parkedLanes } from '../../lib/store/mysql/queries/parked-lanes.query.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * How the MySQL store's limited claim finds the lanes of parked jobs (parked-lanes.query.ts): one
 * probe per lane, however long each lane's backlog, and the lanes the claim's rotation needs.
 */
describe('MySQL parked lanes (MariaDB)', () => {
  let dataSource: DataSource;
  let store: MysqlJobStore;
  let conns: MysqlConnections;
  const lane = (n: number) => `key:k${String(n).padStart(3, '0')}`;

  /** Parks `perLane` jobs of `queue` in each of `lanes` lanes (their limit keys' lanes, as a claim would). */
  async function park(queue: string, lanes: number, perLane: number): Promise<void> {
    for (let n = 0; n < lanes; n += 1) {
      const jobs = Array.from({ length: perLane }, (_, i) => ({ name: 'held', payload: i, queue, concurrencyKey: `k${String(n).padStart(3, '0')}` }));
      await store.jobEnqueueMany({ jobs });
    }
    await dataSource.query(`UPDATE ${store.naming.jobs} SET parked_key = CONCAT('key:', concurrency_key) WHERE queue = ? AND state = 'scheduled'`, [queue]);
  }

  /** The lanes the claim would find, on one of the store's sessions, with `paused` the paused queues; and the index entries it read. */
  async function lanesOf(queues: string[], after: { queue: string; key: string } | null, paused = '') {
    return conns.session(async (db: MysqlExecutor) => {
      await db.run('SET @paused = ?', [paused]);
      const reads = async () => {
        const rows = await db.query<{ name: string; value: string }>(
          `SELECT variable_name AS name, variable_value AS value FROM information_schema.session_status WHERE variable_name IN ('HANDLER_READ_NEXT', 'HANDLER_READ_KEY')`,
        );
        return Object.fromEntries(rows.map((r) => [r.name.toLowerCase(), Number(r.value)]));
      };
      const before = await reads();
      const tx = new MysqlTransaction(db);
      try {
        const found = await parkedLanes(tx, store.naming, queues, after);
        const afterReads = await reads();
        // What the claim's transaction holds locked after the probes: claimers racing for a lane's first job would deadlock on it.
        const [trx] = await db.query<{ locked: string }>(`SELECT trx_rows_locked AS locked FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()`);
        return {
          found,
          next: afterReads.handler_read_next! - before.handler_read_next!,
          seeks: afterReads.handler_read_key! - before.handler_read_key!,
          locked: Number(trx?.locked ?? 0),
        };
      } finally {
        await db.run('ROLLBACK');
      }
    });
  }

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('lanes') });
    await store.migrate();
    conns = new MysqlConnections(dataSource, 1);
    await park('big', 3, 1_000);
    await park('many', LANES_PER_CLAIM + 6, 2);
    await park('small', 2, 1);
    await park('wide', 2 * LANES_PER_CLAIM + 12, 1);
  });
  afterAll(async () => {
    await conns.close();
    await store.close();
    await dropInstallation(dataSource, store.naming);
    await dataSource.destroy();
  });

  it('finds the lanes of a 3,000-job backlog with a seek each, without reading the backlog or locking a job', async () => {
    const { found, next, seeks, locked } = await lanesOf(['big'], null);
    expect(found).toEqual([0, 1, 2].map((n) => ({ queue: 'big', key: lane(n) })));
    expect(locked).toBe(0);
    // A seek per lane and one that finds nothing; a read of the backlog would step through its 3,000 entries.
    expect(seeks).toBeLessThanOrEqual(10);
    expect(next).toBeLessThan(20);
  });

  it('gives each queue its first lanes, one more than a claim reads, and from after the last lane read as many again, in key order', async () => {
    const first = await lanesOf(['many', 'small'], null);
    const firstOfMany = Array.from({ length: LANES_PER_CLAIM + 1 }, (_, n) => ({ queue: 'many', key: lane(n) }));
    expect(first.found).toEqual([...firstOfMany, { queue: 'small', key: lane(0) }, { queue: 'small', key: lane(1) }]);
    // From after lane 10 of 'many': its lanes 11 to the last (70) besides its first 65, so every lane.
    const after = await lanesOf(['many', 'small'], { queue: 'many', key: lane(10) });
    expect(after.found).toEqual([
      ...Array.from({ length: LANES_PER_CLAIM + 6 }, (_, n) => ({ queue: 'many', key: lane(n) })),
      { queue: 'small', key: lane(0) },
      { queue: 'small', key: lane(1) },
    ]);
    // The lane read last in a queue the claim does not list starts nothing.
    expect((await lanesOf(['small'], { queue: 'many', key: lane(10) })).found).toEqual([0, 1].map((n) => ({ queue: 'small', key: lane(n) })));
  });

  it('past the first lanes of a queue with many, gives as many after the last lane read, so the rotation from it finds its whole turn', async () => {
    const all = 2 * LANES_PER_CLAIM + 12;
    const at = LANES_PER_CLAIM + 5;
    const { found } = await lanesOf(['wide'], { queue: 'wide', key: lane(at) });
    const first = Array.from({ length: LANES_PER_CLAIM + 1 }, (_, n) => n);
    const afterIt = Array.from({ length: LANES_PER_CLAIM + 1 }, (_, n) => at + 1 + n).filter((n) => n < all);
    expect(found).toEqual([...first, ...afterIt].map((n) => ({ queue: 'wide', key: lane(n) })));
    // Lanes between the two runs are left out: the claim takes LANES_PER_CLAIM from after `at`, all present.
    expect(found.some((l) => l.key === lane(LANES_PER_CLAIM + 1))).toBe(false);
  });

  it('passes a paused queue by', async () => {
    expect((await lanesOf(['big', 'small'], null, 'x,big')).found).toEqual([0, 1].map((n) => ({ queue: 'small', key: lane(n) })));
    expect((await lanesOf(['big'], { queue: 'big', key: lane(0) }, 'big')).found).toEqual([]);
  });
});
