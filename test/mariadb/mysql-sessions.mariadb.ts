import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { StoreBusyError, StoreUnavailableError } from '../../lib/core/index.js';
import { MysqlConnections, MYSQL_LOCK_RETRIES } from '../../lib/store/mysql/mysql-connections.js';
import { checkHostSessions } from '../../lib/store/mysql/mysql-server-check.js';
import { fromMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/** Resolves once `predicate` holds, checking every few milliseconds; fails after `ms`. */
async function until(predicate: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting: ${what}.`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("MySQL store sessions (MariaDB)", () => {
  let dataSource: DataSource;
  const table = `\`${uniquePrefix('sess')}rows\``;
  const opened: MysqlConnections[] = [];
  const connections = (backOff?: (attempt: number) => Promise<void>) => {
    const conns = new MysqlConnections(dataSource, 4, undefined, backOff);
    opened.push(conns);
    return conns;
  };

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    await dataSource.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v VARCHAR(8) NOT NULL, t TEXT) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`);
    await dataSource.query(`INSERT INTO ${table} (id, v) VALUES (1, 'a'), (2, 'b')`);
  });
  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close()));
    await dataSource.query(`DROP TABLE IF EXISTS ${table}`);
    await dataSource.destroy();
  });

  it('runs its sessions at READ COMMITTED, in UTC, with a strict sql_mode, whatever the server and the host sessions run', async () => {
    const conns = connections();
    const [row] = await conns.session((db) =>
      db.query<{ iso: string; tz: string; mode: string }>('SELECT @@SESSION.tx_isolation AS iso, @@SESSION.time_zone AS tz, @@SESSION.sql_mode AS mode'),
    );
    expect(row).toEqual({ iso: 'READ-COMMITTED', tz: '+00:00', mode: expect.stringContaining('STRICT_ALL_TABLES') });
    // Strict: a value that does not fit fails instead of being cut, which a non-strict session does with a warning.
    await expect(conns.session((db) => db.run(`UPDATE ${table} SET v = 'too long for it' WHERE id = 1`))).rejects.toThrow(/too long/i);
    expect(await dataSource.query(`SELECT v FROM ${table} WHERE id = 1`)).toEqual([{ v: 'a' }]);
  });

  it('keeps 4-byte characters, on its own sessions and on the host transaction it joins', async () => {
    const conns = connections();
    const text = 'snow ☃, rocket 🚀, han 𠜎';
    await conns.session((db) => db.run(`UPDATE ${table} SET t = ? WHERE id = 1`, [text]));
    await dataSource.transaction(async (manager) => {
      const db = await conns.joined(manager);
      await db.run(`UPDATE ${table} SET t = ? WHERE id = 2`, [`${text}!`]);
    });
    expect(await conns.session((db) => db.query(`SELECT t FROM ${table} ORDER BY id`))).toEqual([{ t: text }, { t: `${text}!` }]);
  });

  it('reads instants as UTC whatever the session time zone of the host transaction that reads them', async () => {
    const conns = connections();
    const stamp = await dataSource.transaction(async (manager) => {
      await manager.query(`SET time_zone = '+05:30'`);
      const db = await conns.joined(manager);
      const [row] = await db.query<{ utc: string; local: string }>('SELECT UTC_TIMESTAMP(3) AS utc, NOW(3) AS local');
      return row!;
    });
    const utc = fromMysqlInstant(stamp.utc).getTime();
    expect(Math.abs(utc - Date.now())).toBeLessThan(60_000);
    // The session's own clock is 5 h 30 min ahead: the store never reads it.
    expect(fromMysqlInstant(stamp.local).getTime() - utc).toBe(5.5 * 3_600_000);
  });

  it('runs a transaction again when the server breaks a deadlock by rolling it back, and both transactions end committed', async () => {
    const backOffs: number[] = [];
    const conns = connections(async (attempt) => {
      backOffs.push(attempt);
    });
    const steps: string[] = [];
    let aHoldsFirst = false;
    let bHoldsSecond = false;
    let runs = 0;
    // A takes row 1, then row 2; B takes row 2, then row 1. Each waits for the other's first lock
    // before asking for its second, so the two wait on each other and the server must kill one.
    const a = conns.transaction(async (db) => {
      await db.run(`UPDATE ${table} SET v = 'a1' WHERE id = 1`);
      aHoldsFirst = true;
      await until(async () => bHoldsSecond, 'B to lock row 2');
      await db.run(`UPDATE ${table} SET v = 'a2' WHERE id = 2`);
      steps.push('a');
    });
    const b = conns.transaction(async (db) => {
      runs += 1;
      await until(async () => aHoldsFirst, 'A to lock row 1');
      await db.run(`UPDATE ${table} SET v = 'b2' WHERE id = 2`);
      bHoldsSecond = true;
      await db.run(`UPDATE ${table} SET v = 'b1' WHERE id = 1`);
      steps.push('b');
    });
    await Promise.all([a, b]);
    expect(steps.sort()).toEqual(['a', 'b']);
    // One of the two was rolled back and ran again after one back-off.
    expect(backOffs).toEqual([1]);
    const values = ((await dataSource.query(`SELECT v FROM ${table} ORDER BY id`)) as { v: string }[]).map((r) => r.v);
    expect([['b1', 'b2'], ['a1', 'a2']]).toContainEqual(values);
    expect(runs).toBeGreaterThanOrEqual(1);
  });

  it('fails with StoreBusyError, rolled back, once a transaction has lost its locks more often than it retries', async () => {
    const backOffs: number[] = [];
    const conns = connections(async (attempt) => {
      backOffs.push(attempt);
    });
    let tries = 0;
    const lockWait = Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), { errno: 1205, code: 'ER_LOCK_WAIT_TIMEOUT' });
    const attempt = conns.transaction(async (db) => {
      tries += 1;
      await db.run(`UPDATE ${table} SET v = 'lost' WHERE id = 1`);
      throw lockWait;
    });
    await expect(attempt).rejects.toThrow(StoreBusyError);
    expect(tries).toBe(MYSQL_LOCK_RETRIES + 1);
    expect(backOffs).toEqual(Array.from({ length: MYSQL_LOCK_RETRIES }, (_, i) => i + 1));
    expect(((await dataSource.query(`SELECT v FROM ${table} WHERE id = 1`)) as { v: string }[])[0]!.v).not.toBe('lost');
  });

  it('fails with StoreUnavailableError when the server kills its session mid-transaction, and the next transaction gets a live one', async () => {
    const conns = connections();
    await expect(
      conns.transaction(async (db) => {
        const [{ id }] = await db.query<{ id: number }>('SELECT CONNECTION_ID() AS id');
        await dataSource.query(`KILL CONNECTION ${Number(id)}`);
        await db.query('SELECT 1');
      }),
    ).rejects.toThrow(StoreUnavailableError);
    expect(await conns.transaction((db) => db.query('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  });

  it("refuses a DataSource whose sessions' character set cannot hold 4-byte characters, naming the option to change", async () => {
    await expect(checkHostSessions(dataSource)).resolves.toBeUndefined();
    const narrow = await openMariadbDataSource({ charset: 'utf8_general_ci' });
    try {
      await expect(checkHostSessions(narrow)).rejects.toThrow(/character set "utf8(mb3)?".*charset option to 'utf8mb4'/);
    } finally {
      await narrow.destroy();
    }
  });
});
